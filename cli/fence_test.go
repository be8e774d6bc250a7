package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// TestFenceStopsOnlyLapsedLeases: a worker's renewals stop getting through
// (the test holds its registry row locked, so each one hangs until it gives
// up) while its claims still do. The run claimed before that is stopped
// when its lease lapses unrenewed; a run claimed after that, whose own
// lease is fresh, is not stopped for the other's lapse, and once renewals
// get through again it runs to its end, once. (Old, recovered, may be
// claimed again while renewals are blocked, and that run stopped in turn
// when its own lease lapses: right, and not what this test is about.)
func TestFenceStopsOnlyLapsedLeases(t *testing.T) {
	t.Parallel() // it mostly waits (leases, outages, a server restarting): see TestMain
	admin := newPostgresHome(t)
	admin.must("config", "set", "heartbeat-interval", "1s")
	// A lease long enough that fresh, claimed after the renewals stopped,
	// keeps its own through the claim, its start and the hold below even
	// on a busy machine (claim to start took seconds in a -race run).
	admin.must("config", "set", "lease", "16s")
	old, fresh := t.TempDir(), t.TempDir()
	admin.enqueueOutageJob(old, "old")
	// The worker's pool at its default size: connections its renewals gave
	// up on, and the recoveries they hold up, must not leave none free.
	worker := newHome(t)
	worker.db = strings.Replace(admin.db, "&pool_max_conns=4", "", 1)
	w := worker.start("worker", "start", "--count", "2", "--no-spool")
	waitFor(t, time.Minute, "job old to start", func() bool { return pidIn(filepath.Join(old, "old.pid")) > 0 })

	ctx := t.Context()
	tx := holdLocked(t, worker.db, "SELECT 1 FROM workers FOR UPDATE")
	waitFor(t, time.Minute, "the worker to stop the run whose lease lapsed", func() bool {
		return strings.Contains(w.stderr.String(), "lapsed")
	})
	enqueuedAt := time.Now() // fresh's lease begins no earlier
	admin.enqueueOutageJob(fresh, "fresh")
	waitFor(t, time.Minute, "job fresh to start", func() bool { return pidIn(filepath.Join(fresh, "fresh.pid")) > 0 })
	freshAt := time.Now()
	// Renewals stay blocked for three heartbeat intervals of fresh's run:
	// a fence that went by the last renewal (now more than a lease ago)
	// rather than by each run's own lease stops fresh within one or two.
	// Fresh's own lease, taken after enqueuedAt, lapses 16 s after it at
	// the earliest: the hold ends before that whatever the machine.
	hold := time.NewTimer(min(3*time.Second, time.Until(enqueuedAt.Add(13*time.Second))))
	select {
	case <-hold.C:
	case <-w.done:
		t.Fatalf("the worker exited: %v\nstderr: %s", w.err, w.stderr)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("renewals blocked for %v after fresh was enqueued, %v after it started", time.Since(enqueuedAt).Round(10*time.Millisecond), time.Since(freshAt).Round(10*time.Millisecond))
	if time.Since(freshAt) < 2*time.Second {
		// fresh started so late that its own lease left no room for the
		// hold: its runs are still checked below, the fence's choice less so.
		t.Logf("the hold was cut short by fresh's own lease: a fence by the last renewal had under two heartbeats to show")
	}
	openGate(t, fresh)
	openGate(t, old)
	admin.must("wait", "old", "fresh", "--timeout", "60s")

	if got := lines(t, filepath.Join(fresh, "fresh.runs")); len(got) != 1 || got["1"] != 1 {
		t.Errorf("fresh started %v (attempt: times), want once: its own lease never lapsed", got)
	}
	if runs := runsOf(t, admin, "fresh"); len(runs) != 1 || runs[0].Outcome != claim.OutcomeCompleted {
		t.Errorf("runs of fresh %+v, want one, completed", runs)
	}
	if runs := runsOf(t, admin, "old"); len(runs) < 2 || runs[0].Outcome != claim.OutcomeLost {
		t.Errorf("runs of old %+v, want run 1 lost (its lease lapsed), then one completed", runs)
	}
	if strings.Contains(w.stderr.String(), "job fresh: run 1 killed") {
		t.Errorf("the worker stopped fresh's run, whose own lease never lapsed")
	}
	t.Logf("the worker said:\n%s", w.stderr)
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

// TestRunThatEndedInItsLeaseIsNotFenced: a run's command ends well inside
// its lease while the store hangs (the test holds the run's row and the
// worker's registry row locked: its start record and its renewals wait),
// and the hang outlasts the lease. The run ended before its lease did: it
// is recorded completed once the store answers, not taken for one the
// fence killed ("lease lapsed while the store was unreachable") and run
// again. It was run twice on one worker, alone on its server.
func TestRunThatEndedInItsLeaseIsNotFenced(t *testing.T) {
	t.Parallel() // it mostly waits for a lease: see TestMain
	admin := newPostgresHome(t)
	admin.must("config", "set", "heartbeat-interval", "1s")
	admin.must("config", "set", "lease", "4s")
	dir := t.TempDir()
	admin.enqueueOutageJob(dir, "ended")
	worker := newHome(t)
	worker.db = admin.db
	w := worker.start("worker", "start", "--no-spool")
	waitFor(t, time.Minute, "job ended to start", func() bool { return pidIn(filepath.Join(dir, "ended.pid")) > 0 })

	ctx := t.Context()
	dsn := strings.Replace(admin.db, "&pool_max_conns=4", "", 1)
	look, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer look.Close(ctx)
	tx := holdLocked(t, dsn, "SELECT 1 FROM workers FOR UPDATE", "SELECT 1 FROM runs WHERE job_id = 'ended' FOR UPDATE")
	var leaseUntil int64
	if err := tx.QueryRow(ctx, "SELECT lease_until FROM jobs WHERE id = 'ended'").Scan(&leaseUntil); err != nil {
		t.Fatal(err)
	}
	// The run's start record (a second into the run) waits for the row.
	waitFor(t, time.Minute, "the worker's record of the run's start to wait for its row", func() bool {
		var n int
		err := look.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE runs SET pgid%'`).Scan(&n)
		return err == nil && n > 0
	})
	openGate(t, dir)
	waitFor(t, time.Minute, "the job's command to end", func() bool {
		_, err := os.Stat(filepath.Join(dir, "ended.done"))
		return err == nil
	})
	// The hang outlasts the lease, and the fence's next look after it.
	lapse := time.Unix(0, leaseUntil).Add(2 * time.Second)
	waitFor(t, time.Minute, "the lease to lapse while the store hangs", func() bool {
		return time.Now().After(lapse) || strings.Contains(w.stderr.String(), "lapsed")
	})
	released := time.Now()
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	admin.must("wait", "ended", "--timeout", "60s")
	if got := lines(t, filepath.Join(dir, "ended.runs")); len(got) != 1 || got["1"] != 1 {
		t.Errorf("ended started %v (attempt: times), want once: its command ended inside its lease", got)
	}
	if runs := runsOf(t, admin, "ended"); len(runs) != 1 || runs[0].Outcome != claim.OutcomeCompleted {
		t.Errorf("runs of ended %+v, want one, completed", runs)
	} else if ended := runs[0].EndedAt; !ended.Before(released.Add(-time.Second)) {
		// Its command ended seconds before the store answered again.
		t.Errorf("run 1 ended at %v, %v after the store answered again: dated by its record, not by its end",
			ended.Format(time.RFC3339Nano), ended.Sub(released))
	}
	if strings.Contains(w.stderr.String(), "lapsed") {
		t.Errorf("the worker took the ended run for one its lease stopped:\n%s", w.stderr)
	}
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

// holdLocked runs the locking statements in a transaction of a connection
// of its own to dsn, and returns it: the rows stay locked (the worker's
// writes to them wait, as on a hung server) until the test ends it.
func holdLocked(t *testing.T, dsn string, statements ...string) pgx.Tx {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range statements {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return tx
}

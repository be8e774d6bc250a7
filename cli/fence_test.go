package cli

import (
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
	conn, err := pgx.Connect(ctx, worker.db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1 FROM workers FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
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

package cli

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// TestJobsTableLockedUnderWorker: another session holds a lock on the jobs
// table (an administrator's LOCK TABLE in an open transaction) while a
// worker runs a job, for less than the lease. The worker says once that
// its renewal got no answer, and why that may be (a lock held elsewhere),
// rather than a driver's "context deadline exceeded"; once the lock goes
// it says the store is back, and the job is recorded once. The server is
// a cluster of the test's own.
func TestJobsTableLockedUnderWorker(t *testing.T) {
	t.Parallel() // it mostly waits (a server of its own, a lock): see TestMain
	_, dsn, admin, h, dir := faultSetup(t)
	admin.must("config", "set", "lease", "30s")
	admin.enqueueOutageJob(dir, "held")
	w := h.start("worker", "start", "--count", "1", "--no-spool")
	waitFor(t, time.Minute, "job held to start", func() bool { return pidIn(filepath.Join(dir, "held.pid")) > 0 })

	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), "LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the worker to say its renewal got no answer", func() bool {
		return strings.Contains(w.stderr.String(), "store unreachable")
	})
	// An enqueue behind the lock (its home has no worker: it writes to
	// the store itself) waits as long as the lock is held, and says so.
	behind := admin.start("enqueue", "--id", "behind", "--command", "true")
	waitFor(t, time.Minute, "enqueue behind the lock to say it waits", func() bool {
		return strings.Contains(behind.stderr.String(), "the store has not answered")
	})
	if text := behind.stderr.String(); !strings.Contains(text, "pg_locks") {
		t.Errorf("enqueue behind a lock said %q, want where to look (pg_locks)", text)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	text := w.stderr.String()
	if !strings.Contains(text, "no answer within") || !strings.Contains(text, "a lock another session holds") {
		t.Errorf("the worker said, of a renewal that waited on a lock:\n%s\nwant it to say there was no answer in time, and that a lock may be why", text)
	}
	if code := behind.exit(t, time.Minute); code != 0 {
		t.Errorf("enqueue behind the lock: exit %d once it went, want 0\nstderr: %s", code, behind.stderr)
	}
	openGate(t, dir)
	admin.must("wait", "held", "--timeout", "60s")
	if runs := runsOf(t, admin, "held"); len(runs) != 1 || runs[0].Outcome != claim.OutcomeCompleted {
		t.Errorf("job held: runs %+v, want one, completed", runs)
	}
	// Each outage said once, and its end once, when the store has
	// answered for a while (run.Reach.Settle): the lock's, and on a loaded
	// machine perhaps another renewal slower than its second, once that
	// while was over. Each end is waited for.
	saidOfStore := func(text string) (said []string) {
		for _, line := range strings.Split(text, "\n") {
			switch {
			case strings.Contains(line, "store unreachable"):
				said = append(said, "unreachable")
			case strings.Contains(line, "store reachable again"):
				said = append(said, "reachable")
			}
		}
		return said
	}
	waitFor(t, time.Minute, "the worker to say the store is back", func() bool {
		said := saidOfStore(w.stderr.String())
		return len(said) > 0 && said[len(said)-1] == "reachable"
	})
	text = w.stderr.String()
	said := saidOfStore(text)
	alternate := len(said) >= 2 && len(said)%2 == 0
	for i, what := range said {
		alternate = alternate && what == []string{"unreachable", "reachable"}[i%2]
	}
	if !alternate {
		t.Errorf("the worker said %v of the store, want each outage once and its end once\nstderr: %s", said, text)
	}
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

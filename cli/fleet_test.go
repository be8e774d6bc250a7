package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// TestFleetConnections: 50 one-slot workers, each a process of its own, on
// a server of the test's own started with max_connections = 150, all claim
// and run jobs, and the server never counts more connections than
// claim.WorkerConnections(1) a worker. Each job waits for a gate (a lock
// the test holds: fifty jobs polling for a file would take both cores of a
// small machine), so that each worker holds one until all 50 have started:
// every worker runs a job.
func TestFleetConnections(t *testing.T) {
	const workers = 50
	needTools(t, "flock")
	cluster := pgtest.NewCluster(t, "max_connections = 150")
	dsn, drop, err := pgtest.NewSchema(cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	dir := t.TempDir()
	gate := holdGate(t, dir)
	enqueueGated(t, dsn, dir, workers)

	monitor, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer monitor.Close(t.Context())
	most := 0
	sample := func() {
		t.Helper()
		var n int
		err := monitor.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, n)
	}
	procs := make([]*proc, workers)
	for i := range procs {
		h := newHome(t)
		h.db = dsn
		procs[i] = h.start("worker", "start", "--count", "1", "--no-spool")
	}
	var started []string
	waitSampling(t, sample, procs, "every job started", func() string {
		return fmt.Sprintf("%d of %d jobs started", len(started), workers)
	}, func() bool {
		started, _ = filepath.Glob(filepath.Join(dir, "*.started"))
		return len(started) == workers
	})
	gate.Close() // and its lock with it
	var completed, ran int
	waitSampling(t, sample, procs, "every job completed", func() string {
		return fmt.Sprintf("%d of %d jobs completed", completed, workers)
	}, func() bool {
		err := monitor.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE state = 'completed'),
			(SELECT count(DISTINCT worker_id) FROM runs) FROM jobs`).Scan(&completed, &ran)
		return err == nil && completed == workers
	})
	if ran != workers {
		t.Errorf("%d workers ran the %d jobs, want each of the %d", ran, workers, workers)
	}
	if bound := workers * claim.WorkerConnections(1); most > bound {
		t.Errorf("the server counted up to %d connections of %d one-slot workers, want at most %d", most, workers, bound)
	}
	for _, p := range procs {
		if ended(p) {
			t.Errorf("a worker exited early: %v\nstderr: %s", p.err, p.stderr)
		}
	}
	t.Logf("%d one-slot workers held up to %d connections", workers, most)
}

// holdGate takes the lock dir/gate that enqueueGated's jobs wait for; they
// go on once the file returned is closed.
func holdGate(t *testing.T, dir string) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "gate"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return f
}

// enqueueGated stores n jobs that note their start in dir and wait for
// the lock dir/gate (holdGate).
func enqueueGated(t *testing.T, dsn, dir string, n int) {
	t.Helper()
	s, err := claim.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	batch := make([]claim.NewJob, n)
	for i := range batch {
		batch[i] = claim.NewJob{ID: fmt.Sprintf("job-%02d", i), Env: map[string]string{"DIR": dir},
			Command: `touch "$DIR/$QUEUECTL_JOB_ID.started"; flock -s "$DIR/gate" true`}
	}
	if _, err := s.EnqueueAll(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
}

// waitSampling calls sample until done, for five minutes at most: fifty
// worker processes built with -race start in seconds alone, and took more
// than a minute in a whole test run on a slow machine. On a timeout it says
// how far it got and what any worker that ended said.
func waitSampling(t *testing.T, sample func(), procs []*proc, what string, progress func() string, done func() bool) {
	t.Helper()
	waitReport(t, 5*time.Minute, what, func() bool {
		sample()
		return done()
	}, func() string {
		said := progress()
		for _, p := range procs {
			if ended(p) {
				said += fmt.Sprintf("\na worker ended: %v\nstderr: %s", p.err, p.stderr)
			}
		}
		return said
	})
}

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// TestFleetConnections: 50 one-slot workers, each a process of its own, on
// a server of the test's own started with max_connections = 150, all claim
// and run jobs, and the server never counts more connections than
// claim.WorkerConnections(1) a worker. Each job waits for a gate file, so
// that each worker holds one until all 50 have started: every worker runs
// a job.
func TestFleetConnections(t *testing.T) {
	const workers = 50
	cluster := pgtest.NewCluster(t, "max_connections = 150")
	dsn, drop, err := pgtest.NewSchema(cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	dir := t.TempDir()
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
	waitSampling(t, sample, "every job started", func() bool {
		started, _ := filepath.Glob(filepath.Join(dir, "*.started"))
		return len(started) == workers
	})
	if err := os.WriteFile(filepath.Join(dir, "open"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var completed, ran int
	waitSampling(t, sample, "every job completed", func() bool {
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
		select {
		case <-p.done:
			t.Errorf("a worker exited early: %v\nstderr: %s", p.err, p.stderr)
		default:
		}
	}
	t.Logf("%d one-slot workers held up to %d connections", workers, most)
}

// enqueueGated stores n jobs that note their start in dir and wait for
// the file dir/open.
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
			Command: `touch "$DIR/$QUEUECTL_JOB_ID.started"; while [ ! -e "$DIR/open" ]; do sleep 0.05; done`}
	}
	if _, err := s.EnqueueAll(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
}

// waitSampling calls sample until done, for a minute at most.
func waitSampling(t *testing.T, sample func(), what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !done() {
		sample()
		if time.Now().After(deadline) {
			t.Fatalf("not reached in a minute: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	sample()
}

package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A job killed because its lease expired is said to be so, in words, and
// is recovered as a lost run: it does not use up an attempt.
func TestLeaseExpiredKillIsLostNotFailed(t *testing.T) {
	s := mustOpenStore(t)
	var mu sync.Mutex
	now := time.Now()
	s.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var logMu sync.Mutex
	var log strings.Builder
	w := newWorker(t, s)
	w.Drain = false
	w.Slots = 1
	w.Config.HeartbeatInterval = time.Hour // no renewal during the test
	w.Config.Lease = 2 * time.Hour
	w.Events = func(e Event) {
		logMu.Lock()
		defer logMu.Unlock()
		log.WriteString(strings.TrimSpace(e.String()) + "\n")
	}
	one := 1
	enqueue(t, s, claim.NewJob{ID: "long", Command: "sleep 60", MaxRetries: &one})
	soft, stopSoft := context.WithCancel(context.Background())
	hard, stopHard := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(soft, hard) }()
	defer func() { stopSoft(); stopHard(); <-done }()
	waitFor(t, "the job's process group to be recorded", func() bool {
		runs, err := s.Runs(context.Background(), "long")
		return err == nil && len(runs) == 1 && runs[0].PGID > 0
	})

	mu.Lock()
	now = now.Add(3 * time.Hour) // past the lease
	mu.Unlock()
	said := func() string {
		logMu.Lock()
		defer logMu.Unlock()
		return log.String()
	}
	waitFor(t, "the worker to say the lease expired", func() bool {
		return strings.Contains(said(), "job long: run 1 killed by signal KILL (lease expired)")
	})
	waitFor(t, "the job to be recovered", func() bool { return get(t, s, "long").Lost == 1 })
	j := get(t, s, "long")
	if j.State == claim.Dead || j.State == claim.Failed || j.Attempts > 1 {
		t.Errorf("after its lease expired: state %s, attempts %d, error %q; want it run again, not failed\n%s",
			j.State, j.Attempts, j.LastError, said())
	}
}

// A stopping worker waits for its running jobs and keeps renewing their
// leases meanwhile: a job that outlives its lease after `worker stop` must
// not look lost to another host, which would run it a second time.
func TestStoppingWorkerRenewsLeases(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	w.Drain = false
	w.Slots = 1
	w.Config.HeartbeatInterval = 100 * time.Millisecond
	w.Config.Lease = 2 * time.Second
	release := filepath.Join(t.TempDir(), "release")
	enqueue(t, s, claim.NewJob{ID: "long", Command: "while [ ! -e " + release + " ]; do sleep 0.02; done"})
	soft, stopSoft := context.WithCancel(context.Background())
	hard, stopHard := context.WithCancel(context.Background())
	defer stopHard()
	done := make(chan error, 1)
	go func() { done <- w.Run(soft, hard) }()
	waitFor(t, "the job to start", func() bool { return get(t, s, "long").State == claim.Processing })

	stopSoft()
	stoppedAt := time.Now()
	waitFor(t, "the lease to be renewed after the stop", func() bool {
		return get(t, s, "long").LeaseUntil.After(stoppedAt.Add(w.Config.Lease))
	})
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil after a soft stop", err)
	}
	if j := get(t, s, "long"); j.State != claim.Completed || j.Attempts != 1 {
		t.Errorf("job after the stop: state %s, attempts %d; want completed in one attempt", j.State, j.Attempts)
	}
}

// A run that the store no longer assigns to its worker (its claim taken
// back by a crash of the server, or recovered by another worker, and the
// job claimed again by someone else) is stopped at the worker's next
// renewal: two runs of one job must not go on at once. The other claim is
// left alone.
func TestUnassignedRunIsStopped(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	w.Drain = false
	w.Slots = 1
	w.Config.HeartbeatInterval = 100 * time.Millisecond
	w.Config.Lease = time.Hour // neither the fence nor a reaper steps in
	var said strings.Builder
	var mu sync.Mutex
	w.Events = func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		said.WriteString(e.String() + "\n")
	}
	enqueue(t, s, claim.NewJob{ID: "taken", Command: "sleep 300"})
	soft, stopSoft := context.WithCancel(context.Background())
	hard, stopHard := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(soft, hard) }()
	defer func() { stopSoft(); stopHard(); <-done }()
	var pgid int
	waitFor(t, "the run's process group to be recorded", func() bool {
		runs, err := s.Runs(context.Background(), "taken")
		if err == nil && len(runs) == 1 {
			pgid = runs[0].PGID
		}
		return pgid > 0
	})

	ctx := context.Background()
	fs, err := s.InFlight(ctx)
	if err != nil || len(fs) != 1 {
		t.Fatalf("InFlight = %v, %v; want the one run", fs, err)
	}
	if _, err := s.Recover(ctx, fs[0]); err != nil {
		t.Fatal(err)
	}
	other := claim.Claimant{WorkerID: "other", Host: "elsewhere", PID: 1, Lease: time.Hour, LogDir: t.TempDir()}
	if _, _, err := s.Claim(ctx, other); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run the store no longer assigns to the worker to be stopped", func() bool { return !groupAlive(pgid) })
	if j := get(t, s, "taken"); j.State != claim.Processing || j.WorkerID != "other" || j.Runs != 2 {
		t.Errorf("job after the stop: %s by %q, run %d; want run 2 of other still processing", j.State, j.WorkerID, j.Runs)
	}
	waitFor(t, "the worker to say why it stopped the run", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(said.String(), "no longer assigns it to this worker")
	})
}

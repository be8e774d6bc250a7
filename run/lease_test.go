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
	"github.com/queuectl/queuectl/claim/sqlite/sqlitetest"
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

// A claim whose answer comes back with less of its lease left than a
// renewal needs (here none: it waited on another process's write lock
// for longer than the lease) starts nothing: other hosts may take the run
// for lost at any moment and start the job too. The job goes back, the
// attempt not counted, and runs once, on a claim of its own.
func TestLateClaimDoesNotStart(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	w.Drain = false
	w.Slots = 1
	w.Config.Lease, w.Config.HeartbeatInterval = 2*time.Second, time.Second
	marker := filepath.Join(t.TempDir(), "ran")
	due := time.Now().Add(500 * time.Millisecond)
	enqueue(t, s, claim.NewJob{ID: "late", Command: "echo ran >> " + marker, RunAt: due})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	defer func() { stop(); <-done }()
	waitFor(t, "the worker to register", func() bool {
		ws, err := s.Workers(context.Background())
		return err == nil && len(ws) == 1
	})

	// Held from before the job is due until its claim, sent once it is,
	// has waited longer than the lease.
	unlock := sqlitetest.WriteLock(t, s.Path())
	if j := get(t, s, "late"); j.State != claim.Pending {
		t.Fatalf("job late is %s before the lock was taken, want pending", j.State)
	}
	time.Sleep(time.Until(due.Add(w.Config.Lease + 500*time.Millisecond)))
	released := time.Now()
	unlock()

	waitFor(t, "job late to complete", func() bool { return get(t, s, "late").State == claim.Completed })
	runs, err := s.Runs(context.Background(), "late")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) > 0 && runs[0].StartedAt.After(released.Add(-(w.Config.Lease - w.Config.HeartbeatInterval))) {
		t.Fatalf("the first claim was sent at %v, too close to the lock's release at %v to come back late: "+
			"the machine stalled, and the test shows nothing", runs[0].StartedAt, released)
	}
	if len(runs) != 2 || !runs[0].NeverRan() || !strings.Contains(runs[0].Error, "too late to start") ||
		runs[1].Outcome != claim.OutcomeCompleted {
		t.Fatalf("runs of job late: %+v\nwant the late claim's not started, then one completed", runs)
	}
	if data, _ := os.ReadFile(marker); string(data) != "ran\n" {
		t.Errorf("job late ran %q, want once", data)
	}
	if j := get(t, s, "late"); j.Attempts != 1 {
		t.Errorf("job late: %d attempts, want 1 (the late claim not counted)", j.Attempts)
	}
}

// A claim's lease ends by the worker's clock no later than in the store:
// a claim the store dated before the worker asked for it (PostgreSQL
// dates a group's claims by its first) has its lease cut by as much.
func TestLeaseEndNoLaterThanTheStores(t *testing.T) {
	began := time.Now()
	asked := time.Date(2026, 12, 1, 0, 0, 10, 0, time.UTC)
	for _, c := range []struct {
		dated time.Time
		want  time.Duration
	}{
		{asked.Add(time.Millisecond), 30 * time.Second}, // dated as it was sent
		{asked, 30 * time.Second},
		{asked.Add(-6 * time.Second), 24 * time.Second}, // in a group that began 6s before
	} {
		got := leaseEnd(asked, began, claim.Run{StartedAt: c.dated}, 30*time.Second)
		if got.Sub(began) != c.want {
			t.Errorf("claim dated %v, asked at %v: lease ends %v after it was sent, want %v",
				c.dated.Sub(asked), asked, got.Sub(began), c.want)
		}
	}
}

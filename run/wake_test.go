package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// TestWakeupWakesOne: a change wakes one waiting slot, the longest waiting;
// one that came while no slot waited is kept for the next; fireAll wakes
// them all.
func TestWakeupWakesOne(t *testing.T) {
	var u wakeup
	a, b := u.wait(), u.wait()
	u.fire()
	if len(a) != 1 || len(b) != 0 {
		t.Fatalf("after one fire: first slot has %d wake-ups, second %d; want 1 and 0", len(a), len(b))
	}
	u.withdraw(b)
	u.fire() // nobody waits
	if c := u.wait(); len(c) != 1 {
		t.Fatal("a wake-up that came while no slot waited was lost")
	}
	d, e := u.wait(), u.wait()
	u.fireAll()
	if len(d) != 1 || len(e) != 1 {
		t.Fatalf("fireAll woke %d and %d, want both", len(d), len(e))
	}
}

// TestBurstReachesEverySlot: four jobs committed together start together
// in four idle slots, though the change that announced them woke one slot:
// each slot that claims one wakes the next. The poll interval is an hour,
// so only wake-ups can start them; each job waits until all four started.
func TestBurstReachesEverySlot(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	w.Slots, w.Drain = 4, false
	w.Config.PollInterval = time.Hour
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the worker's slots to wait", func() bool {
		w.wake.mu.Lock()
		defer w.wake.mu.Unlock()
		return len(w.wake.waiting) == 4
	})
	var jobs []claim.NewJob
	for i := range 4 {
		// Starts, then waits (5 s at most) for all four to have started.
		cmd := fmt.Sprintf(`touch %q/started-%d; i=0; while [ $(ls %q | grep -c started) -lt 4 ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; [ $i -lt 500 ]`, dir, i, dir)
		jobs = append(jobs, claim.NewJob{Command: cmd})
	}
	rs, err := s.EnqueueAll(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		waitFor(t, "job "+r.Job.ID+" to end", func() bool { return get(t, s, r.Job.ID).State.Finished() })
		if j := get(t, s, r.Job.ID); j.State != claim.Completed {
			started, _ := os.ReadDir(dir)
			var names []string
			for _, e := range started {
				names = append(names, filepath.Base(e.Name()))
			}
			t.Fatalf("job %s ended %s: the four did not run together (started: %s)", j.ID, j.State, strings.Join(names, " "))
		}
	}
}

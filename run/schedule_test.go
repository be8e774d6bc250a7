package run

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// clock is an injectable Store.Now, safe for concurrent use.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestWorkerFiresScheduleEachDueTime(t *testing.T) {
	s := mustOpenStore(t)
	clk := &clock{now: time.Date(2026, 11, 23, 16, 0, 30, 0, time.UTC)}
	s.Now = clk.Now
	if _, err := s.AddSchedule(t.Context(), claim.NewSchedule{Name: "tick", Cron: "* * * * *", TZ: "UTC",
		Job: claim.NewJob{Command: "echo tock"}}); err != nil {
		t.Fatal(err)
	}
	w := newWorker(t, s)
	w.Drain = false
	var log logLines
	w.Events = func(e Event) { log.logf("%s", e) }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()

	completed := func(n int) func() bool {
		return func() bool {
			jobs, err := s.List(context.Background(), claim.Filter{State: claim.Completed})
			return err == nil && len(jobs) == n
		}
	}
	for i := 1; i <= 2; i++ {
		clk.Advance(time.Minute)
		waitFor(t, "the schedule's job of minute "+string(rune('0'+i)), completed(i))
	}
	jobs, _ := s.List(context.Background(), claim.Filter{})
	if len(jobs) != 2 || !strings.HasPrefix(jobs[0].ID, "tick-20261123-160100-") || !strings.HasPrefix(jobs[1].ID, "tick-20261123-160200-") {
		t.Errorf("jobs = %v, want tick-20261123-1601-… and tick-20261123-1602-…", ids(jobs))
	}
	if !strings.Contains(log.String(), "schedule tick: due 2026-11-23 ") {
		t.Errorf("worker log:\n%s\nwant a line for each due time", log.String())
	}
}

func ids(jobs []claim.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

package serve_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// TestChartCountsEachRunOnce: as time passes, the chart's hour holds
// exactly the runs that ended in it, though the minutes that are over are
// read from the store once.
func TestChartCountsEachRunOnce(t *testing.T) {
	h := newHome(t)
	t0 := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	clk := &clock{now: t0}
	h.store.Now = clk.Now
	ts := h.serve(t, serve.Options{Now: clk.Now})
	c := claim.Claimant{WorkerID: "w", Host: "h", PID: os.Getpid(), Lease: time.Hour, LogDir: t.TempDir()}
	n := 0
	runAt := func(at time.Time) {
		clk.set(at)
		h.enqueue(t, claim.NewJob{ID: fmt.Sprintf("j%d", n), Command: "true"})
		n++
		_, r, err := h.store.Claim(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.store.Complete(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	total := regexp.MustCompile(`(\d+) runs ended in the last hour`)
	check := func(at time.Time, want int) {
		t.Helper()
		clk.set(at)
		_, body := get(t, ts.URL+"/", "Accept", "text/html")
		m := total.FindStringSubmatch(body)
		if m == nil || m[1] != fmt.Sprint(want) {
			t.Errorf("at %s the chart says %v, want %d runs", at.Format("15:04:05"), m, want)
		}
	}
	runAt(t0.Add(10 * time.Second))
	runAt(t0.Add(70 * time.Second))
	check(t0.Add(2*time.Minute+30*time.Second), 2)
	runAt(t0.Add(2*time.Minute + 40*time.Second)) // in a minute not yet final when last read
	runAt(t0.Add(3*time.Minute + 5*time.Second))
	check(t0.Add(5*time.Minute), 4)
	check(t0.Add(5*time.Minute+30*time.Second), 4)
	check(t0.Add(60*time.Minute+30*time.Second), 3) // 03:00 is out of the hour
	check(t0.Add(62*time.Minute+30*time.Second), 1)
	check(t0.Add(3*time.Hour), 0)
}

package serve_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
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
	total := regexp.MustCompile(`(No|\d+) runs? ended in the last hour`)
	check := func(at time.Time, want int) {
		t.Helper()
		clk.set(at)
		_, body := get(t, ts.URL+"/", "Accept", "text/html")
		m := total.FindStringSubmatch(body)
		if m != nil && m[1] == "No" {
			m[1] = "0"
		}
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

// TestChartOfAnHourWithoutRuns: with no run in the hour, the chart says so
// in words, and its scale is the one 0 of its base line, not a second 0 at
// the top; one run is "1 run".
func TestChartOfAnHourWithoutRuns(t *testing.T) {
	h := newHome(t)
	ts := h.serve(t, serve.Options{})
	_, body := get(t, ts.URL+"/", "Accept", "text/html")
	if !strings.Contains(body, "No run ended in the last hour.") || strings.Contains(body, "busiest minute had 0") {
		t.Errorf("chart of a fresh home: want \"No run ended in the last hour.\" and no busiest minute of 0:\n%s", body)
	}
	if n := strings.Count(body, `class="scale"`); n != 1 {
		t.Errorf("chart of a fresh home has %d scale labels, want 1 (its 0):\n%s", n, body)
	}
	h.enqueue(t, claim.NewJob{ID: "one", Command: "true"})
	h.worker(t, 1)
	h.waitState(t, "one", claim.Completed)
	ts = h.serve(t, serve.Options{}) // a server of its own: the first may serve what it read seconds ago
	_, body = get(t, ts.URL+"/", "Accept", "text/html")
	if !strings.Contains(body, "1 run ended in the last hour") {
		t.Errorf("chart of one run: want \"1 run ended in the last hour\":\n%s", body)
	}
	if !strings.Contains(body, "<b>1</b> worker · <b>1</b> slot · <b>0</b> busy") {
		t.Errorf("overview of one worker with one slot: want \"1 worker · 1 slot · 0 busy\":\n%s", body)
	}
}

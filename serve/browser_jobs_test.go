package serve_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// TestBrowserJobsRunningAndRetry: the jobs table says, as list does, how
// long a processing job has run (RUNNING FOR) and when a failed job runs
// again (retry in …), beside the pending jobs' reasons.
func TestBrowserJobsRunningAndRetry(t *testing.T) {
	ctx := browser(t)
	h := newHome(t)
	three, base, exit := 3, 600, 1
	h.enqueue(t, claim.NewJob{ID: "flaky", Command: "curl -f https://example.com/feed", Queue: "feeds", MaxRetries: &three, BackoffBase: &base})
	c := claim.Claimant{WorkerID: "w1", Host: "h1", PID: 1, Lease: time.Minute, LogDir: t.TempDir(), Queues: []string{"feeds"}}
	j, r, err := h.store.Claim(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := h.store.Fail(context.Background(), j, r, &exit, "exit status 1", time.Hour); err != nil || st != claim.Failed {
		t.Fatalf("Fail(flaky) = %s, %v; want failed", st, err)
	}
	h.enqueue(t, claim.NewJob{ID: "busy", Command: "until [ -e never ]; do sleep 0.05; done", Queue: "run"})
	h.worker(t, 1, "run")
	h.waitState(t, "busy", claim.Processing)
	ts := h.serve(t, serve.Options{})

	navigate(t, ctx, ts.URL+"/jobs")
	rows := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll("table.jobs tbody tr")].map(r => [r.querySelector(".id").textContent,
		(r.querySelector(".badge.retry") || {}).textContent || (r.querySelector("td.for") || {}).textContent || ""]))`)
	if got := rows["busy"]; !regexp.MustCompile(`^[0-9]+[smhd]`).MatchString(got) {
		t.Errorf("/jobs: busy (processing) says %q, want how long it has run (all: %v)", got, rows)
	}
	if got := rows["flaky"]; !regexp.MustCompile(`^retry in (9|10)m$`).MatchString(got) {
		t.Errorf("/jobs: flaky (failed) says %q, want when it runs again, retry in 10m (all: %v)", got, rows)
	}
	if header := eval[string](t, ctx, `document.querySelector("table.jobs thead").textContent`); !regexp.MustCompile(`running for`).MatchString(header) {
		t.Errorf("/jobs: header %q names no running for", header)
	}
}

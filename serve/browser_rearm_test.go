package serve_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// TestBrowserRetryAndRestartSayWhatCameBack: after the Retry button of a
// dead job (on its page and on the dead letters) and the Restart button of
// a canceled one, the page the browser lands on says which jobs that died
// with it came back and which stay dead, in the words of `dlq retry` and
// `restart` on stderr; the job page keeps saying it through the reloads
// with which it follows the job to its end; a made-up notice key says
// nothing.
func TestBrowserRetryAndRestartSayWhatCameBack(t *testing.T) {
	ctx := browser(t)
	h := newHome(t)
	one := 1
	// d fails its first run (dead after one, with e and k) and, retried,
	// runs until the test opens its gate, so that the page shows it
	// unfinished first and must reload to show it completed.
	dir := t.TempDir()
	runs, gate := filepath.Join(dir, "runs"), filepath.Join(dir, "gate")
	h.enqueue(t, claim.NewJob{ID: "d", Queue: "dq", MaxRetries: &one,
		Command: fmt.Sprintf("echo >> %s; [ $(wc -l < %s) -gt 1 ] || exit 3; until [ -e %s ]; do sleep 0.05; done", runs, runs, gate)})
	h.enqueue(t, claim.NewJob{ID: "e", Command: "true", Queue: "dq", After: []string{"d"}})
	h.enqueue(t, claim.NewJob{ID: "k", Command: "true", Queue: "dq", After: []string{"d"}, UniqueKey: "nightly"})
	h.enqueue(t, claim.NewJob{ID: "x", Command: "exit 1", Queue: "dq", MaxRetries: &one})
	h.enqueue(t, claim.NewJob{ID: "y1", Command: "true", Queue: "dq", After: []string{"x"}})
	h.enqueue(t, claim.NewJob{ID: "y2", Command: "true", Queue: "dq", After: []string{"x"}})
	h.enqueue(t, claim.NewJob{ID: "a", Command: "true", Queue: "held"})
	h.enqueue(t, claim.NewJob{ID: "b", Command: "true", Queue: "held", After: []string{"a"}})
	h.worker(t, 2, "dq")
	for _, id := range []string{"e", "k", "y1", "y2"} {
		h.waitState(t, id, claim.Dead)
	}
	h.enqueue(t, claim.NewJob{ID: "taker", Command: "true", Queue: "held", UniqueKey: "nightly"})
	if _, code := h.cli(t, "cancel", "a"); code != 0 {
		t.Fatalf("queuectl cancel a: exit %d", code)
	}
	h.waitState(t, "b", claim.Dead)
	ts := h.serve(t, serve.Options{})
	const notice = `[...document.querySelectorAll("main .notice p")].map(p => p.textContent)`
	says := func(where string, want ...string) {
		t.Helper()
		if got := eval[[]string](t, ctx, notice); !slices.Equal(got, want) {
			t.Errorf("%s says %q, want %q", where, got, want)
		}
	}

	// Retry on the job page: the notice names e, back, and k, left dead.
	navigate(t, ctx, ts.URL+"/jobs/d")
	says("/jobs/d before Retry")
	click(t, ctx, `form[action="/jobs/d/retry"] button`)
	waitJS(t, ctx, "d's page after Retry", `location.pathname == "/jobs/d" && document.querySelector("h1 .state").textContent != "dead"`)
	retried := []string{
		"job e came back with d: pending, waiting again",
		`job k stays dead: another job holds its unique_key "nightly"; once that one is done: queuectl dlq retry k`,
	}
	says("/jobs/d after Retry", retried...)
	screenshot(t, ctx, "retry-notice")
	// The page follows d: it reloads as d moves on, and still says it.
	eval[bool](t, ctx, `(window.marker = true)`)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "d completed, shown by a reload", `!window.marker && document.querySelector("h1 .state").textContent == "completed"`)
	says("/jobs/d reloaded, d completed", retried...)
	h.waitState(t, "e", claim.Completed)

	// Restart on the job page of a canceled job: b came back with it.
	navigate(t, ctx, ts.URL+"/jobs/a")
	click(t, ctx, `form[action="/jobs/a/restart"] button`)
	waitJS(t, ctx, "a's page after Restart", `location.pathname == "/jobs/a" && document.querySelector("h1 .state").textContent == "pending"`)
	says("/jobs/a after Restart", "job b came back with a: pending, waiting again")

	// Retry on the dead letters: back to them, saying it there.
	navigate(t, ctx, ts.URL+"/dlq")
	click(t, ctx, `form[action="/jobs/x/retry"] button`)
	waitJS(t, ctx, "the dead letters after Retry", `location.pathname == "/dlq"`)
	says("/dlq after Retry of x", "jobs y1, y2 came back with x: pending, waiting again")

	// Only a key the server gave out says anything.
	navigate(t, ctx, ts.URL+"/jobs/d?notice=MADEUPKEYMADEUPKEYMADEUPKE")
	says("/jobs/d with a made-up notice key")
}

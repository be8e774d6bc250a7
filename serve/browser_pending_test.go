package serve_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// TestBrowserPendingReasons: the overview counts runnable pending jobs
// apart from scheduled, waiting, paused and held ones, and lists what runs
// now with how long it has run; the jobs table badges each pending job's
// reason; a job page links the jobs it waits on, and holds and releases.
func TestBrowserPendingReasons(t *testing.T) {
	ctx := browser(t)
	h := pendingHome(t)
	low := -1
	for i := range 3 {
		h.enqueue(t, claim.NewJob{ID: fmt.Sprintf("warm-up-%d", i), Command: "true", Queue: "run"})
	}
	h.enqueue(t, claim.NewJob{ID: "busy", Command: "until [ -e never ]; do sleep 0.05; done", Queue: "run", Priority: low})
	h.worker(t, 1, "run")
	h.waitState(t, "busy", claim.Processing)
	ts := h.serve(t, serve.Options{})

	navigate(t, ctx, ts.URL+"/")
	waitJS(t, ctx, "the tiles", `document.querySelectorAll(".tile").length > 0`)
	tiles := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll(".tile")].map(e => [e.querySelector(".k").textContent, e.querySelector(".n").textContent]))`)
	for key, want := range map[string]string{"runnable": "1", "scheduled": "1", "waiting": "1", "paused": "1",
		"held": "1", "processing": "1", "completed": "3", "total": "9"} {
		if tiles[key] != want {
			t.Errorf("overview tile %s = %q, want %s (tiles %v)", key, tiles[key], want, tiles)
		}
	}
	if _, ok := tiles["pending"]; ok {
		t.Errorf("overview has a pending tile beside its reasons: %v", tiles)
	}
	sum := 0
	for _, k := range append([]string{"runnable"}, claim.PendingReasons...) {
		n, _ := strconv.Atoi(tiles[k])
		sum += n
	}
	if out, _ := h.cli(t, "status"); !containsLine(out, fmt.Sprintf("  pending: %d", sum)) {
		t.Errorf("runnable and reason tiles add up to %d; status says\n%s", sum, out)
	}
	running := eval[[]string](t, ctx, `[...document.querySelectorAll("#running tbody tr")].map(r => r.querySelector(".id").textContent + " " + r.querySelector(".for").textContent)`)
	if len(running) != 1 || !runningFor.MatchString(running[0]) {
		t.Errorf("running now = %q, want busy with how long it has run", running)
	}
	screenshot(t, ctx, "overview-pending")

	// The jobs table: each pending job's reason as a badge; held a filter.
	navigate(t, ctx, ts.URL+"/jobs?state=pending")
	badges := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll("table.jobs tbody tr")].map(r => [r.querySelector(".id").textContent, (r.querySelector(".badge.reason") || {}).textContent || ""]))`)
	for id, want := range map[string]string{"later": "scheduled", "second": "waiting", "mail-1": "paused", "first": ""} {
		if got, ok := badges[id]; !ok || got != want {
			t.Errorf("jobs?state=pending: %s's reason badge = %q, want %q (all: %v)", id, got, want, badges)
		}
	}
	if !eval[bool](t, ctx, `!!document.querySelector('select[name="state"] option[value="held"]')`) {
		t.Errorf("the state filter has no held")
	}
	navigate(t, ctx, ts.URL+"/jobs?state=held")
	if ids := eval[[]string](t, ctx, `[...document.querySelectorAll("table.jobs tbody .id")].map(e => e.textContent)`); len(ids) != 1 || ids[0] != "kept" {
		t.Errorf("jobs?state=held = %q, want kept", ids)
	}

	// A waiting job links what it waits on; that job is held and released.
	navigate(t, ctx, ts.URL+"/jobs/second")
	if got := eval[string](t, ctx, `document.querySelector("h1 .badge.reason").textContent`); got != "waiting" {
		t.Errorf("job page of second: reason %q, want waiting", got)
	}
	click(t, ctx, `dl.fields a[href="/jobs/first"]`)
	waitJS(t, ctx, "first's page", `location.pathname == "/jobs/first"`)
	click(t, ctx, `form[action="/jobs/first/hold"] button`)
	waitJS(t, ctx, "first held", `document.querySelector("h1 .state").textContent == "held"`)
	click(t, ctx, `form[action="/jobs/first/release"] button`)
	waitJS(t, ctx, "first pending again", `document.querySelector("h1 .state").textContent == "pending"`)
}

// TestBrowserLogFollows: a running job's log opens at its end and stays
// there as lines arrive; once the reader scrolls up, it stays where the
// reader put it.
func TestBrowserLogFollows(t *testing.T) {
	ctx := browser(t)
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "talk", Command: "seq 1 300; for i in $(seq 1 3000); do echo more $i; sleep 0.05; done"})
	h.worker(t, 1)
	h.waitState(t, "talk", claim.Processing)
	h.waitFor(t, "300 lines of log", func() bool {
		out, _ := h.cli(t, "logs", "talk")
		return containsLine(out, "300")
	})
	ts := h.serve(t, serve.Options{})

	const atEnd = `(e => e.scrollHeight > e.clientHeight && e.scrollTop + e.clientHeight >= e.scrollHeight - 4)(document.querySelector("#logtext"))`
	const length = `document.querySelector("#logtext").textContent.length`
	navigate(t, ctx, ts.URL+"/jobs/talk")
	if !eval[bool](t, ctx, atEnd) {
		t.Errorf("the live log opens at scrollTop %v of %v, not at its end", eval[float64](t, ctx, `document.querySelector("#logtext").scrollTop`),
			eval[float64](t, ctx, `document.querySelector("#logtext").scrollHeight`))
	}
	before := eval[int](t, ctx, length)
	waitJS(t, ctx, "new lines, followed", fmt.Sprintf(`%s > %d + 100 && %s`, length, before, atEnd))

	eval[bool](t, ctx, `(document.querySelector("#logtext").scrollTop = 200, true)`)
	before = eval[int](t, ctx, length)
	waitJS(t, ctx, "new lines", fmt.Sprintf(`%s > %d + 100`, length, before))
	if top := eval[float64](t, ctx, `document.querySelector("#logtext").scrollTop`); top != 200 {
		t.Errorf("after new lines, the log the reader scrolled up to 200 is at %v", top)
	}
}

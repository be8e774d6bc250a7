package serve_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// TestBrowserCancelSaysWhatDiedWithIt: after the Cancel button of a
// pending job that others wait for (b for a, c for b), the job's page says
// which of them died with it and why, in the words `cancel` prints on
// stderr; the Cancel of a job nothing waits for says nothing.
func TestBrowserCancelSaysWhatDiedWithIt(t *testing.T) {
	ctx := browser(t)
	d := watchDialogs(ctx)
	h := newHome(t)
	// No worker: a stays pending until the button cancels it.
	h.enqueue(t, claim.NewJob{ID: "a", Command: "true", Queue: "q"})
	h.enqueue(t, claim.NewJob{ID: "b", Command: "true", Queue: "q", After: []string{"a"}})
	h.enqueue(t, claim.NewJob{ID: "c", Command: "true", Queue: "q", After: []string{"b"}})
	h.enqueue(t, claim.NewJob{ID: "alone", Command: "true", Queue: "q"})
	ts := h.serve(t, serve.Options{})
	const notice = `[...document.querySelectorAll("main .notice p")].map(p => p.textContent)`
	says := func(where string, want ...string) {
		t.Helper()
		if got := eval[[]string](t, ctx, notice); !slices.Equal(got, want) {
			t.Errorf("%s says %q, want %q", where, got, want)
		}
	}

	navigate(t, ctx, ts.URL+"/jobs/a")
	says("/jobs/a before Cancel")
	click(t, ctx, `form[action="/jobs/a/cancel"] button`)
	waitJS(t, ctx, "a's page after Cancel", `location.pathname == "/jobs/a" && document.querySelector("h1 .state").textContent == "canceled"`)
	says("/jobs/a after Cancel",
		"job b is dead: dependency a was canceled",
		"job c is dead: dependency a was canceled (via b)")
	screenshot(t, ctx, "cancel-notice")
	for _, id := range []string{"b", "c"} {
		h.waitState(t, id, claim.Dead)
	}

	navigate(t, ctx, ts.URL+"/jobs/alone")
	click(t, ctx, `form[action="/jobs/alone/cancel"] button`)
	waitJS(t, ctx, "alone's page after Cancel", `location.pathname == "/jobs/alone" && document.querySelector("h1 .state").textContent == "canceled"`)
	says("/jobs/alone after Cancel")
	if strings.Contains(eval[string](t, ctx, `location.search`), "notice=") {
		t.Errorf("the Cancel of a job nothing waits for leads to %s, want no notice key", eval[string](t, ctx, `location.href`))
	}

	if seen := d.all(); len(seen) != 2 || !strings.HasPrefix(seen[0], "confirm: Cancel this job") {
		t.Errorf("dialogs = %q, want the confirm of each Cancel", seen)
	}
}

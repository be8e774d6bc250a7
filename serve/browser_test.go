package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/testenv"
	"github.com/queuectl/queuectl/serve"
)

// browser starts headless Chromium for the test and returns a tab's
// context. Without Chromium the test is skipped, but fails under CI=true:
// CI must run the browser tests (.ci/run installs Chromium).
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		testenv.Missing(t, "no chromium on PATH (apt-get install chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		// its singleton socket's directory, which it leaves when killed, in the test's own
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-default-apps", true),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// dialogs records every JavaScript dialog the tab opens, and answers it:
// a confirm() (the dashboard asks before what cannot be undone) with OK,
// anything else by dismissing it, so that the page goes on.
type dialogs struct {
	mu   sync.Mutex
	seen []string
}

func watchDialogs(ctx context.Context) *dialogs {
	d := &dialogs{}
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			d.mu.Lock()
			d.seen = append(d.seen, string(ev.Type)+": "+ev.Message)
			d.mu.Unlock()
			accept := ev.Type == page.DialogTypeConfirm
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept})
		}
	}()
	return d
}

func (d *dialogs) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.seen...)
}

// eval returns the value of a JavaScript expression in the tab.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS polls expr until it is true in the tab.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("timed out waiting for %s (%s); page:\n%s", what, expr, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// click clicks the element sel and waits for the page it leads to.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}

func navigate(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
}

// screenshot saves the whole page as a PNG in $QUEUECTL_SCREENSHOTS, or
// in the test's temporary directory, and logs where.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("QUEUECTL_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// history gives the last hour a past: jobs run through the store with its
// clock set back, a few every minute, one in twelve failing, so that the
// chart has a shape. Done before any worker runs, which shares the clock.
func history(t *testing.T, h *home) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	defer func() { h.store.Now = time.Now }()
	c := claim.Claimant{WorkerID: "earlier", Host: "earlier", PID: 1, Lease: time.Minute, LogDir: t.TempDir()}
	one := 1
	n := 0
	for m := 58; m >= 1; m-- {
		for k := range 3 + (58-m)%7 + (m%11)/2 {
			at := now.Add(-time.Duration(m)*time.Minute + time.Duration(k)*time.Second)
			h.store.Now = func() time.Time { return at }
			h.enqueue(t, claim.NewJob{ID: fmt.Sprintf("report-%03d", n), Command: "make report", Queue: "reports", MaxRetries: &one})
			j, r, err := h.store.Claim(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if n++; n%12 == 0 {
				_, err = h.store.Fail(ctx, j, r, &one, "exit status 1", time.Hour)
			} else {
				_, err = h.store.Complete(ctx, r)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestBrowser drives the dashboard in headless Chromium against a live
// worker: overview, click through to a dead job, read its log, retry it
// and watch its state change; the counts agree with `status --json`; a
// job whose command is a script tag shows it as text and opens no dialog;
// a running job's log grows on its page by itself.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	d := watchDialogs(ctx)
	h := newHome(t)
	one, two := 1, 2
	for i := range 24 {
		h.enqueue(t, claim.NewJob{ID: fmt.Sprintf("build-%02d", i), Command: fmt.Sprintf("echo building part %d", i),
			Queue: []string{"default", "builds", "reports"}[i%3]})
	}
	h.enqueue(t, claim.NewJob{ID: "nightly-backup", Command: "echo dumping app db; echo 'pg_dump: connection refused' >&2; exit 2",
		MaxRetries: &two, BackoffBase: &one})
	h.enqueue(t, claim.NewJob{ID: "xss", Command: "<script>alert(1)</script>", MaxRetries: &one})
	h.enqueue(t, claim.NewJob{ID: "publish", Command: "echo never", After: []string{"xss"}})
	h.enqueue(t, claim.NewJob{ID: "tail-me", Command: "for i in $(seq 1 3000); do echo line $i; sleep 0.05; done", Queue: "slow"})
	for i := range 5 {
		h.enqueue(t, claim.NewJob{ID: fmt.Sprintf("later-%d", i), Command: "make report", Queue: "later"})
	}
	history(t, h)
	h.worker(t, 4, "default", "builds", "reports", "slow")
	h.waitState(t, "nightly-backup", claim.Dead)
	h.waitState(t, "xss", claim.Dead)
	h.waitState(t, "publish", claim.Dead)
	h.waitState(t, "build-23", claim.Completed)
	h.waitState(t, "tail-me", claim.Processing)
	ts := h.serve(t, serve.Options{})

	// The overview agrees with `status --json`.
	navigate(t, ctx, ts.URL+"/")
	waitJS(t, ctx, "the chart", `document.querySelectorAll("svg.chart rect.bar").length > 0`)
	out, code := h.cli(t, "status", "--json")
	if code != 0 {
		t.Fatalf("status --json exit %d", code)
	}
	var status map[string]any
	json.Unmarshal([]byte(out), &status)
	tiles := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll(".tile")].map(e => [e.querySelector(".k").textContent, e.querySelector(".n").textContent]))`)
	for _, key := range []string{"processing", "completed", "failed", "dead", "held", "total"} {
		if want := fmt.Sprint(status[key]); tiles[key] != want {
			t.Errorf("overview tile %s = %q, status --json says %s", key, tiles[key], want)
		}
	}
	if want := fmt.Sprint(status["pending"]); tiles["runnable"] != want { // no worker serves queue later; nothing waits
		t.Errorf("overview tile runnable = %q, status --json says %s pending", tiles["runnable"], want)
	}
	screenshot(t, ctx, "overview")

	// Click through to the failing job and read its log.
	click(t, ctx, "a.tile.t-dead")
	waitJS(t, ctx, "the dead jobs", `location.search == "?state=dead" && !!document.querySelector('a[href="/jobs/nightly-backup"]')`)
	rows := eval[int](t, ctx, `document.querySelectorAll("table.jobs tbody tr").length`)
	if want := fmt.Sprint(status["dead"]); fmt.Sprint(rows) != want {
		t.Errorf("jobs?state=dead shows %d rows, status --json says %s dead", rows, want)
	}
	// A dead job's page opens on stderr, where its reason is.
	click(t, ctx, `a[href="/jobs/nightly-backup"]`)
	if got := eval[string](t, ctx, `document.querySelector("#logtext").textContent`); got != "pg_dump: connection refused\n" {
		t.Errorf("the dead job's page opens on %q, want its stderr", got)
	}
	screenshot(t, ctx, "job")
	click(t, ctx, `tr.selected a[href*="stream=stdout"]`)
	if got := eval[string](t, ctx, `document.querySelector("#logtext").textContent`); got != "dumping app db\n" {
		t.Errorf("stdout on the job page = %q", got)
	}

	// The dead letters say the last line of each one's stderr.
	navigate(t, ctx, ts.URL+"/dlq")
	if got := eval[string](t, ctx, `[...document.querySelectorAll("table.jobs tbody tr")].find(tr => tr.textContent.includes("nightly-backup")).querySelector("td.stderr").textContent`); got != "pg_dump: connection refused" {
		t.Errorf("/dlq says %q of nightly-backup's stderr, want its last line", got)
	}
	navigate(t, ctx, ts.URL+"/jobs/nightly-backup")

	// Retry it: the page shows it leave dead, then (live) its new runs.
	click(t, ctx, `form[action="/jobs/nightly-backup/retry"] button`)
	waitJS(t, ctx, "the state to change", `location.pathname == "/jobs/nightly-backup" && document.querySelector("h1 .state").textContent != "dead"`)
	waitJS(t, ctx, "the new runs, shown live", `document.querySelectorAll("tr .state.s-failed").length == 4 && document.querySelector("h1 .state").textContent == "dead"`)

	// A job dead through a dependency names the root cause and how it died.
	navigate(t, ctx, ts.URL+"/jobs/publish")
	if got := eval[string](t, ctx, `document.querySelector("main").innerText`); !regexp.MustCompile(`dependency xss ended dead: exit \d+`).MatchString(got) {
		t.Errorf("the page of a job dead through a dependency says:\n%s\nwant it to name xss and its exit", got)
	}

	// The script tag is text, and nothing opened a dialog.
	navigate(t, ctx, ts.URL+"/jobs/xss")
	if got := eval[string](t, ctx, `document.querySelector("pre.command").textContent`); got != "<script>alert(1)</script>" {
		t.Errorf("command on the page = %q, want the script tag as text", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("main script").length`); n != 0 {
		t.Errorf("the job page has %d script elements in <main>", n)
	}

	// A running job's log grows on its page without a reload.
	navigate(t, ctx, ts.URL+"/jobs/tail-me")
	eval[bool](t, ctx, `(window.marker = true)`)
	before := eval[int](t, ctx, `document.querySelector("#logtext").textContent.length`)
	waitJS(t, ctx, "the log to grow", fmt.Sprintf(`window.marker && document.querySelector("#logtext").textContent.length > %d + 200`, before))

	if !strings.Contains(eval[string](t, ctx, `document.querySelector("#logtext").textContent`), "line 1\n") {
		t.Errorf("the live log lost its beginning")
	}

	// Cancel it: the page asks first, then follows the job to canceled.
	click(t, ctx, `form[action="/jobs/tail-me/cancel"] button`)
	waitJS(t, ctx, "the job to be canceled", `location.pathname == "/jobs/tail-me" && document.querySelector("h1 .state").textContent == "canceled"`)

	if seen := d.all(); len(seen) != 1 || !strings.HasPrefix(seen[0], "confirm: Cancel this job") {
		t.Errorf("dialogs = %q, want only the confirm of Cancel (no alert from the XSS job)", seen)
	}
}

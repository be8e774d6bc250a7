package serve_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// TestRedirectStaysHere: a form's next= sends the browser only to a path
// of this server, whatever control characters it hides (browsers drop a
// TAB or newline from a URL, so "/\t/evil" is "//evil", another site).
func TestRedirectStaysHere(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "a", Command: "true"})
	ts := h.serve(t, serve.Options{})
	csrf := csrfToken(t, ts.URL)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct{ next, want string }{
		{"/\t/evil.example/", "/jobs"},
		{"/\n/evil.example/", "/jobs"},
		{"/\r/evil.example/", "/jobs"},
		{"/\x00/evil.example/", "/jobs"},
		{"/\x7f/evil.example/", "/jobs"},
		{"/ /evil.example/", "/jobs"},
		{"/\\evil.example/", "/jobs"},
		{"//evil.example/", "/jobs"},
		{"https://evil.example/", "/jobs"},
		{"/jobs?state=dead", "/jobs?state=dead"},
	} {
		form := url.Values{"csrf": {csrf}, "next": {tc.next}}
		resp, err := client.PostForm(ts.URL+"/jobs/a/cancel", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || got != tc.want {
			t.Errorf("POST cancel next=%q: %d Location %q, want 303 %q", tc.next, resp.StatusCode, got, tc.want)
		}
	}
}

// TestSymlinkedLogSaysSoCleanly: a log that is a symlink is not served,
// and the job page still shows, saying why, without the home's path.
func TestSymlinkedLogSaysSoCleanly(t *testing.T) {
	h := newHome(t)
	one := 1
	h.enqueue(t, claim.NewJob{ID: "a", Command: "echo a", MaxRetries: &one})
	h.worker(t, 1)
	h.waitState(t, "a", claim.Completed)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("private\n"), 0o600)
	log := filepath.Join(h.dir, "logs", "a", "1.out")
	os.Remove(log)
	if err := os.Symlink(secret, log); err != nil {
		t.Fatal(err)
	}
	ts := h.serve(t, serve.Options{})
	for _, tc := range []struct {
		path, accept string
		status       int
	}{
		{"/jobs/a", "text/html", http.StatusOK},
		{"/jobs/a/runs/1/stdout", "", http.StatusForbidden},
		{"/api/v1/jobs/a/runs/1/stdout", "", http.StatusForbidden},
	} {
		resp, body := get(t, ts.URL+tc.path, "Accept", tc.accept)
		if resp.StatusCode != tc.status || strings.Contains(body, h.dir) || strings.Contains(body, "private") ||
			!strings.Contains(body, "logs/a/1.out") {
			t.Errorf("GET %s = %d, want %d naming logs/a/1.out, not the home's path:\n%s", tc.path, resp.StatusCode, tc.status, body)
		}
	}
}

// TestLogsWithoutEscapes: colours, titles and other terminal escapes in a
// log are not shown as raw control characters, on the page or live; the
// raw log keeps them.
func TestLogsWithoutEscapes(t *testing.T) {
	h := newHome(t)
	one := 1
	h.enqueue(t, claim.NewJob{ID: "c", MaxRetries: &one,
		Command: `printf '\033[1;31mred\033[0m \033]0;title\007plain\033(B\bx\n'`})
	h.worker(t, 1)
	h.waitState(t, "c", claim.Completed)
	ts := h.serve(t, serve.Options{})
	_, page := get(t, ts.URL+"/jobs/c", "Accept", "text/html")
	if !strings.Contains(page, "red plainx\n") || strings.ContainsAny(page, "\x1b\x07\b") {
		t.Errorf("the job page shows the log as %q", between(page, `id="logtext"`, "</pre>"))
	}
	_, events := get(t, ts.URL+"/jobs/c/events?attempt=1&stream=stdout&offset=0")
	if !strings.Contains(events, `"red plainx\n"`) || strings.Contains(events, `\u001b`) {
		t.Errorf("the live log sends %q", events)
	}
	if _, raw := get(t, ts.URL+"/jobs/c/runs/1/stdout"); !strings.Contains(raw, "\x1b[1;31mred") {
		t.Errorf("the raw log = %q, want it as written", raw)
	}
}

func between(s, from, to string) string {
	_, s, _ = strings.Cut(s, from)
	s, _, _ = strings.Cut(s, to)
	return s
}

// TestRangeOnRawLog: a raw log honours Range, so a client can resume or
// read the end of a long log.
func TestRangeOnRawLog(t *testing.T) {
	h := newHome(t)
	one := 1
	h.enqueue(t, claim.NewJob{ID: "r", Command: "echo 0123456789", MaxRetries: &one})
	h.worker(t, 1)
	h.waitState(t, "r", claim.Completed)
	ts := h.serve(t, serve.Options{})
	for _, path := range []string{"/jobs/r/runs/1/stdout", "/api/v1/jobs/r/runs/1/stdout"} {
		resp, body := get(t, ts.URL+path, "Range", "bytes=2-5")
		if resp.StatusCode != http.StatusPartialContent || body != "2345" || resp.Header.Get("Content-Range") != "bytes 2-5/11" {
			t.Errorf("GET %s Range bytes=2-5 = %d %q (Content-Range %q), want 206 \"2345\"", path, resp.StatusCode, body, resp.Header.Get("Content-Range"))
		}
	}
}

// TestUnknownPage: a mistyped address answers 404 with the dashboard's
// error page, its navigation and the pages there are, not a bare line.
func TestUnknownPage(t *testing.T) {
	h := newHome(t)
	ts := h.serve(t, serve.Options{})
	for _, path := range []string{"/job/nightly", "/overview", "/jobs/nightly/runs"} {
		resp, body := get(t, ts.URL+path, "Accept", "text/html")
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(body, `<a href="/jobs"`) || !strings.Contains(body, "no page "+path) {
			t.Errorf("GET %s = %s %s, want 404 with the error page naming it:\n%s", path, resp.Status, resp.Header.Get("Content-Type"), body)
		}
	}
	if resp, _ := get(t, ts.URL+"/jobs"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /jobs = %s", resp.Status)
	}
}

// TestJobPageOfNoSuchRun: a job page asked for a run the job does not have
// answers 404 (400 for no number), as the log endpoint does, instead of
// showing the last run as if it were that one.
func TestJobPageOfNoSuchRun(t *testing.T) {
	h := newHome(t)
	finished(t, h) // bad: 2 runs
	ts := h.serve(t, serve.Options{})
	for _, tc := range []struct {
		query  string
		status int
		says   string
	}{
		{"?attempt=2", http.StatusOK, "broken"},
		{"?attempt=3", http.StatusNotFound, "job bad has no run 3 (it has 2)"},
		{"?attempt=0", http.StatusNotFound, "job bad has no run 0 (it has 2)"},
		{"?attempt=last", http.StatusBadRequest, `attempt &#34;last&#34; is not a number`},
	} {
		resp, body := get(t, ts.URL+"/jobs/bad"+tc.query, "Accept", "text/html")
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("GET /jobs/bad%s = %s, want %d saying %q:\n%s", tc.query, resp.Status, tc.status, tc.says, body)
		}
	}
}

// TestLogOfNoSuchRun: the log of a run the job does not have is a 404 that
// says so, not "no such job" of a job that exists, and its hint names the
// job's runs, not the list of every job.
func TestLogOfNoSuchRun(t *testing.T) {
	h := newHome(t)
	finished(t, h) // bad: 2 runs
	ts := h.serve(t, serve.Options{})
	resp, body := get(t, ts.URL+"/api/v1/jobs/bad/runs/3/stdout")
	var e struct{ Error, Hint string }
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("GET /api/v1/jobs/bad/runs/3/stdout: %v in %s", err, body)
	}
	if resp.StatusCode != http.StatusNotFound || e.Error != "job bad has no run 3 (it has 2)" ||
		!strings.Contains(e.Hint, "GET /api/v1/jobs/bad/runs") {
		t.Errorf("GET /api/v1/jobs/bad/runs/3/stdout = %s %+v, want 404 saying job bad has no run 3 (it has 2), hinting at its runs", resp.Status, e)
	}
}

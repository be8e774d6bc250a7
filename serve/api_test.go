package serve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// finished gives h jobs in most states, run by a real worker: ok
// completed, bad dead after 2 runs (with output on both streams), and
// waiting pending in a queue no worker serves.
func finished(t *testing.T, h *home) {
	t.Helper()
	two, one := 2, 1
	h.enqueue(t, claim.NewJob{ID: "ok", Command: "echo fine"})
	h.enqueue(t, claim.NewJob{ID: "bad", Command: "echo trying; echo broken >&2; exit 3", MaxRetries: &two, BackoffBase: &one})
	h.enqueue(t, claim.NewJob{ID: "waiting", Command: "true", Queue: "later"})
	h.worker(t, 2, "default")
	h.waitState(t, "ok", claim.Completed)
	h.waitState(t, "bad", claim.Dead)
}

// TestAPIIsTheCLIJSON: every API read returns the bytes of the CLI's
// --json for the same question.
func TestAPIIsTheCLIJSON(t *testing.T) {
	h := newHome(t)
	finished(t, h)
	h.enqueue(t, claim.NewJob{ID: "tagged", Command: "true", Queue: "later", Label: "nightly"})
	ts := h.serve(t, serve.Options{})
	for _, tc := range []struct {
		path string
		args []string
	}{
		{"/api/v1/status", []string{"status", "--json"}},
		{"/api/v1/jobs", []string{"list", "--json"}},
		{"/api/v1/jobs?label=nightly", []string{"list", "--label", "nightly", "--json"}},
		{"/api/v1/jobs?label=nightly&queue=later&newest=1&limit=5", []string{"list", "--label", "nightly", "--queue", "later", "--newest", "--limit", "5", "--json"}},
		{"/api/v1/jobs?state=dead", []string{"list", "--state", "dead", "--json"}},
		{"/api/v1/jobs?queue=later", []string{"list", "--queue", "later", "--json"}},
		{"/api/v1/jobs/bad", []string{"show", "--json", "bad"}},
		{"/api/v1/dlq", []string{"dlq", "list", "--json"}},
		{"/api/v1/queues", []string{"queue", "list", "--json"}},
		{"/api/v1/jobs/bad/logs", []string{"logs", "--json", "bad"}},
		{"/api/v1/jobs/bad/logs?attempt=1", []string{"logs", "--json", "--attempt", "1", "bad"}},
		{"/api/v1/jobs/bad/logs?all=1", []string{"logs", "--json", "--all", "bad"}},
		{"/api/v1/jobs/ok/logs", []string{"logs", "--json", "ok"}},
		{"/api/v1/jobs/waiting/logs", []string{"logs", "--json", "waiting"}},
	} {
		resp, body := get(t, ts.URL+tc.path)
		want, code := h.cli(t, tc.args...)
		if resp.StatusCode != http.StatusOK || code != 0 {
			t.Errorf("GET %s = %d; queuectl %s exit %d", tc.path, resp.StatusCode, strings.Join(tc.args, " "), code)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", tc.path, ct)
		}
		if tc.path == "/api/v1/status" { // heartbeat_at moves between the two reads
			body, want = noHeartbeat(body), noHeartbeat(want)
		}
		if body != want {
			t.Errorf("GET %s =\n%s\nqueuectl %s =\n%s", tc.path, body, strings.Join(tc.args, " "), want)
		}
	}
	// A run there is not: 404, as logs' exit 3.
	if resp, body := get(t, ts.URL+"/api/v1/jobs/bad/logs?attempt=9"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "runs 1 to 2, not 9") {
		t.Errorf("GET /api/v1/jobs/bad/logs?attempt=9 = %d %s, want 404 naming runs 1 to 2", resp.StatusCode, body)
	}
	if _, code := h.cli(t, "logs", "--json", "--attempt", "9", "bad"); code != 3 {
		t.Errorf("queuectl logs --json --attempt 9 bad: exit %d, want 3", code)
	}
	// No run is numbered 0 or less: a bad request, as logs' exit 2.
	for _, path := range []string{"/api/v1/jobs/bad/logs?attempt=0", "/api/v1/jobs/bad/logs?attempt=-1", "/jobs/bad/runs/0/stdout"} {
		if resp, body := get(t, ts.URL+path); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s = %d %s, want 400", path, resp.StatusCode, body)
		}
	}
	if _, code := h.cli(t, "logs", "--json", "--attempt", "0", "bad"); code != 2 {
		t.Errorf("queuectl logs --json --attempt 0 bad: exit %d, want 2", code)
	}
	// A run of a job that has not run: 404, as logs' exit 3, saying so
	// (not "no such job"), with its runs for a hint.
	resp, body := get(t, ts.URL+"/api/v1/jobs/waiting/logs?attempt=1")
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "job waiting has no run 1") ||
		strings.Contains(body, "no such job") || !strings.Contains(body, "/api/v1/jobs/waiting/runs") {
		t.Errorf("GET /api/v1/jobs/waiting/logs?attempt=1 = %d %s, want 404: no run 1, and its runs", resp.StatusCode, body)
	}
}

// TestAPIStatusCountsBusySlots: /api/v1/status says how many slots run a
// job, as `status --json` does, not 0 while a job runs.
func TestAPIStatusCountsBusySlots(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "busy", Command: "until [ -e never ]; do sleep 0.05; done"})
	h.worker(t, 2)
	h.waitState(t, "busy", claim.Processing)
	ts := h.serve(t, serve.Options{})
	_, body := get(t, ts.URL+"/api/v1/status")
	want, _ := h.cli(t, "status", "--json")
	if !strings.Contains(want, `"busy": 1,`) {
		t.Fatalf("queuectl status --json =\n%s\nwant busy 1", want)
	}
	if noHeartbeat(body) != noHeartbeat(want) {
		t.Errorf("GET /api/v1/status =\n%s\nqueuectl status --json =\n%s", body, want)
	}
}

var heartbeat = regexp.MustCompile(`"heartbeat_at": "[^"]*"`)

func noHeartbeat(s string) string { return heartbeat.ReplaceAllString(s, `"heartbeat_at": "…"`) }

// TestAPIErrorsMatchExitCodes: an error is {"error", "hint"} with the HTTP
// status of the CLI's exit code for the same mistake.
func TestAPIErrorsMatchExitCodes(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "live", Command: "true"})
	ts := h.serve(t, serve.Options{})
	csrf := csrfToken(t, ts.URL)
	for _, tc := range []struct {
		method, path string
		args         []string
		status, exit int
	}{
		{"GET", "/api/v1/jobs/nope", []string{"show", "nope"}, 404, 3},
		{"GET", "/api/v1/jobs?state=bogus", []string{"list", "--state", "bogus"}, 400, 2},
		{"POST", "/api/v1/jobs/live/retry", []string{"dlq", "retry", "live"}, 409, 4},
		{"POST", "/api/v1/jobs/nope/retry", []string{"dlq", "retry", "nope"}, 404, 3},
		{"POST", "/api/v1/jobs/live/purge", []string{"dlq", "purge", "live"}, 409, 4},
		{"GET", "/api/v1/jobs?prefix=-bad", nil, 400, 0},
		{"GET", "/api/v1/jobs?limit=0", nil, 400, 0},
		{"GET", "/api/v1/jobs/live/runs/1/stdout", []string{"logs", "live"}, 404, 3},
		{"GET", "/api/v1/jobs/live/logs?attempt=1", []string{"logs", "--json", "--attempt", "1", "live"}, 404, 3},
		{"GET", "/api/v1/jobs/nope/logs", []string{"logs", "--json", "nope"}, 404, 3},
		{"GET", "/api/v1/jobs/live/logs?all=1&attempt=1", []string{"logs", "--json", "--all", "--attempt", "1", "live"}, 400, 2},
		{"GET", "/api/v1/jobs/live/logs?all=maybe", nil, 400, 0},
		{"GET", "/api/v1/jobs/live/logs?all=", nil, 400, 0},
		{"GET", "/api/v1/jobs/live/logs?attempt=", nil, 400, 0},
		{"GET", "/api/v1/jobs/live/logs?stream=stdout", nil, 400, 0},
		{"GET", "/api/v1/nothing", nil, 404, 0},
	} {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, nil)
		req.Header.Set("X-CSRF-Token", csrf)
		resp, body := do(t, req)
		var e struct{ Error, Hint string }
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" || e.Hint == "" {
			t.Errorf("%s %s: body %q is no {\"error\", \"hint\"} (%v)", tc.method, tc.path, body, err)
		}
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s = %d %s, want %d", tc.method, tc.path, resp.StatusCode, body, tc.status)
		}
		if tc.args != nil {
			if _, code := h.cli(t, tc.args...); code != tc.exit {
				t.Errorf("queuectl %s exit %d, want %d (as HTTP %d)", strings.Join(tc.args, " "), code, tc.exit, tc.status)
			}
		}
	}
}

// TestAPIUnknownAction: a POST of an action there is none of is a 404
// that says so and lists the actions, not "no such job" of a job that is
// there, with a hint to look for it among the jobs.
func TestAPIUnknownAction(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "live", Command: "true"})
	ts := h.serve(t, serve.Options{})
	post := poster(t, ts.URL)
	for path, actions := range map[string]string{
		"/api/v1/jobs/live/bogus":         "hold, release, cancel, retry, restart, purge, rm",
		"/api/v1/queues/default/bogus":    "pause, resume",
		"/api/v1/rejected/x.json/bogus":   "retry, purge",
		"/api/v1/schedules/nightly/bogus": "pause, resume",
	} {
		status, body := post(path)
		var e struct{ Error, Hint string }
		json.Unmarshal([]byte(body), &e)
		if status != http.StatusNotFound || strings.Contains(e.Error, "no such job") || !strings.Contains(e.Error, actions) ||
			e.Hint == "" || strings.Contains(e.Hint, " there are: ") {
			t.Errorf("POST %s = %d %q, hint %q; want 404 naming the actions (%s), not a missing job", path, status, e.Error, e.Hint, actions)
		}
	}
}

// TestWrongMethodIs405: an address that another method serves answers
// 405 with Allow, not "no page /jobs" of a page that is there; an
// ambiguous job id prefix is hinted at the jobs it starts.
func TestWrongMethodIs405(t *testing.T) {
	h := newHome(t)
	for _, id := range []string{"live", "amb-1", "amb-2"} {
		h.enqueue(t, claim.NewJob{ID: id, Command: "true"})
	}
	ts := h.serve(t, serve.Options{})
	csrf := csrfToken(t, ts.URL)
	for _, tc := range []struct{ method, path, allow string }{
		{"POST", "/jobs", "GET"},
		{"DELETE", "/jobs/live", "GET"},
		{"DELETE", "/api/v1/jobs/live", "GET"},
		{"GET", "/api/v1/jobs/live/retry", "POST"},
	} {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, nil)
		req.Header.Set("X-CSRF-Token", csrf)
		resp, body := do(t, req)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != tc.allow || !strings.Contains(body, "takes "+tc.allow) {
			t.Errorf("%s %s = %d (Allow %q) %s; want 405, Allow %s", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), body, tc.allow)
		}
	}
	// Whatever its CSRF token: an address no POST acts at answers for
	// itself, 405 where another method serves it, before the token is
	// looked at (there is nothing for it to guard).
	for _, path := range []string{"/api/v1/status", "/jobs"} {
		req, _ := http.NewRequest("POST", ts.URL+path, nil)
		req.Header.Set("X-CSRF-Token", "wrong")
		if resp, body := do(t, req); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET" {
			t.Errorf("POST %s with a wrong CSRF token = %d (Allow %q) %s; want 405, Allow GET", path, resp.StatusCode, resp.Header.Get("Allow"), body)
		}
	}
	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/jobs/amb", nil)
	resp, body := do(t, req)
	var e struct{ Error, Hint string }
	json.Unmarshal([]byte(body), &e)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Hint, "/api/v1/jobs?prefix=amb") {
		t.Errorf("GET /api/v1/jobs/amb = %d %s; want 400, hinted at GET /api/v1/jobs?prefix=amb", resp.StatusCode, body)
	}
}

// TestAPIRefusesUnknownParameters: a parameter an endpoint does not know
// (a misspelt filter) is a 400 naming it, never a silent answer with
// everything; the hint lists the parameters the endpoint takes.
func TestAPIRefusesUnknownParameters(t *testing.T) {
	h := newHome(t)
	finished(t, h)
	ts := h.serve(t, serve.Options{})
	for _, tc := range []struct{ path, param, hint string }{
		{"/api/v1/jobs?bogus=1", "bogus", "label"},
		{"/api/v1/jobs?state=dead&lable=nightly", "lable", "label"},
		{"/api/v1/status?bogus=1", "bogus", "no parameters"},
		{"/api/v1/jobs/bad?state=dead", "state", "no parameters"},
		{"/api/v1/jobs/bad/runs?x=1", "x", "no parameters"},
		{"/api/v1/jobs/bad/runs/1/stderr?x=1", "x", "no parameters"},
		{"/api/v1/workers?x=1", "x", "no parameters"},
		{"/api/v1/queues?x=1", "x", "no parameters"},
		{"/api/v1/dlq?state=failed", "state", "limit, newest, after"},
		{"/api/v1/rejected?x=1", "x", "no parameters"},
		{"/api/v1/schedules?x=1", "x", "no parameters"},
		{"/api/v1/csrf?x=1", "x", "no parameters"},
	} {
		resp, body := get(t, ts.URL+tc.path)
		var e struct{ Error, Hint string }
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Errorf("GET %s: body %q is no {\"error\", \"hint\"} (%v)", tc.path, body, err)
		}
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error, `"`+tc.param+`"`) || !strings.Contains(e.Hint, tc.hint) {
			t.Errorf("GET %s = %d %s, want 400 naming %q, hint with %q", tc.path, resp.StatusCode, body, tc.param, tc.hint)
		}
	}
	// A filter given twice with two values is refused, as list refuses it;
	// the same value twice is that value.
	for path, want := range map[string]int{"/api/v1/jobs?state=dead&state=completed": http.StatusBadRequest,
		"/api/v1/jobs?label=a&label=a": http.StatusOK} {
		if resp, body := get(t, ts.URL+path); resp.StatusCode != want || (want != http.StatusOK && !strings.Contains(body, "state is given 2 values")) {
			t.Errorf("GET %s = %d %s, want %d", path, resp.StatusCode, body, want)
		}
	}
	// newest is a boolean: 0 is oldest first, as no newest; a word it is
	// not is refused.
	for path, want := range map[string]int{"/api/v1/jobs?newest=0": http.StatusOK, "/api/v1/jobs?newest=false": http.StatusOK,
		"/api/v1/jobs?newest=yes": http.StatusBadRequest} {
		if resp, body := get(t, ts.URL+path); resp.StatusCode != want {
			t.Errorf("GET %s = %d %s, want %d", path, resp.StatusCode, body, want)
		}
	}
	_, oldest := get(t, ts.URL+"/api/v1/jobs")
	if _, zero := get(t, ts.URL+"/api/v1/jobs?newest=0"); zero != oldest {
		t.Errorf("GET /api/v1/jobs?newest=0 = %s, want the jobs oldest first, as without newest: %s", zero, oldest)
	}
	// The parameters an endpoint knows still work, as do none.
	for _, path := range []string{"/api/v1/jobs?state=dead&queue=default&label=x&prefix=b&limit=5&newest=1&after=b", "/api/v1/status", "/api/v1/jobs/bad/runs/1/stderr"} {
		if resp, body := get(t, ts.URL+path); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %s, want 200", path, resp.StatusCode, body)
		}
	}
}

// TestAPINotFoundListsEndpoints: the hint of an unknown address names
// every endpoint there is.
func TestAPINotFoundListsEndpoints(t *testing.T) {
	h := newHome(t)
	ts := h.serve(t, serve.Options{})
	for _, path := range []string{"/api/v1/", "/api/v1/nothing"} {
		resp, body := get(t, ts.URL+path)
		var e struct{ Error, Hint string }
		if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("GET %s = %d %q (%v), want 404 with a hint", path, resp.StatusCode, body, err)
		}
		for _, want := range []string{"/api/v1/status", "/api/v1/jobs", "/api/v1/jobs/ID", "/api/v1/jobs/ID/runs",
			"/api/v1/jobs/ID/runs/N/stdout", "/api/v1/workers", "/api/v1/queues", "/api/v1/dlq", "/api/v1/rejected",
			"/api/v1/schedules", "/api/v1/csrf", "POST /api/v1/jobs/ID/ACTION", "/api/v1/queues/NAME/ACTION",
			"/api/v1/rejected/NAME/ACTION", "/api/v1/schedules/NAME/ACTION"} {
			if !strings.Contains(e.Hint, want) {
				t.Errorf("GET %s: hint %q does not name %s", path, e.Hint, want)
			}
		}
	}
}

// TestAPIHintsNameDocsThatExist: the hints that send a reader to the docs
// name them where they are in a checkout or a release tarball (docs/,
// beside README.md, which this test finds) and where the .deb puts them
// (tools/dist.sh; .ci/package checks that the installed path exists).
func TestAPIHintsNameDocsThatExist(t *testing.T) {
	h := newHome(t)
	ts := h.serve(t, serve.Options{})
	for _, path := range []string{"/api/v1/jobs?bogus=1", "/api/v1/nothing", "/api/v1/jobs?newest=yes"} {
		_, body := get(t, ts.URL+path)
		var e struct{ Error, Hint string }
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatalf("GET %s: body %q is no {\"error\", \"hint\"} (%v)", path, body, err)
		}
		docs := regexp.MustCompile(`(^|[ (])(docs/[a-z-]+\.md)\b.*(/usr/share/doc/queuectl/docs/[a-z-]+\.md)`).FindStringSubmatch(e.Hint)
		if docs == nil {
			t.Errorf("GET %s: hint %q names no docs/ page with its installed path", path, e.Hint)
			continue
		}
		if _, err := os.Stat(filepath.Join("..", docs[2])); err != nil {
			t.Errorf("GET %s: hint %q names %s: %v", path, e.Hint, docs[2], err)
		}
		if filepath.Base(docs[2]) != filepath.Base(docs[3]) {
			t.Errorf("GET %s: hint %q names %s and %s, two pages", path, e.Hint, docs[2], docs[3])
		}
	}
}

func csrfToken(t *testing.T, base string) string {
	t.Helper()
	_, body := get(t, base+"/api/v1/csrf")
	var v struct{ CSRF string }
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.CSRF == "" {
		t.Fatalf("GET /api/v1/csrf = %q (%v)", body, err)
	}
	return v.CSRF
}

// poster returns a function that POSTs to a path of base with the server's
// CSRF token, and gives the status and body.
func poster(t *testing.T, base string) func(path string) (int, string) {
	csrf := csrfToken(t, base)
	return func(path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, nil)
		req.Header.Set("X-CSRF-Token", csrf)
		resp, body := do(t, req)
		return resp.StatusCode, body
	}
}

// TestAPIPagesWithLinks: following rel="next" walks every job once.
func TestAPIPagesWithLinks(t *testing.T) {
	h := newHome(t)
	for i := range 7 {
		h.enqueue(t, claim.NewJob{ID: fmt.Sprintf("j%d", i), Command: "true"})
	}
	ts := h.serve(t, serve.Options{})
	for _, tc := range []struct{ query, want string }{
		{"limit=3", "j0 j1 j2 | j3 j4 j5 | j6"},
		{"limit=3&newest=1", "j6 j5 j4 | j3 j2 j1 | j0"},
		{"limit=4&prefix=j", "j0 j1 j2 j3 | j4 j5 j6"},
	} {
		var pages []string
		next := ts.URL + "/api/v1/jobs?" + tc.query
		for next != "" {
			resp, body := get(t, next)
			var jobs []struct{ ID string }
			if err := json.Unmarshal([]byte(body), &jobs); err != nil {
				t.Fatalf("GET %s: %v", next, err)
			}
			var ids []string
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			if len(ids) > 0 {
				pages = append(pages, strings.Join(ids, " "))
			}
			next = ""
			if m := regexp.MustCompile(`^<([^>]+)>; rel="next"$`).FindStringSubmatch(resp.Header.Get("Link")); m != nil {
				u, _ := url.Parse(ts.URL)
				ref, _ := url.Parse(m[1])
				next = u.ResolveReference(ref).String()
			}
		}
		if got := strings.Join(pages, " | "); got != tc.want {
			t.Errorf("pages of ?%s = %s, want %s", tc.query, got, tc.want)
		}
	}
}

// TestSafety: the gates every request passes.
func TestSafety(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "x", Command: "true"})
	open := h.serve(t, serve.Options{})
	guarded := h.serve(t, serve.Options{Token: "s3cret"})
	readOnly := h.serve(t, serve.Options{ReadOnly: true})
	csrf := csrfToken(t, open.URL)

	post := func(base, path string, header ...string) int {
		req, _ := http.NewRequest("POST", base+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, _ := do(t, req)
		return resp.StatusCode
	}
	for _, tc := range []struct {
		what string
		got  int
		want int
	}{
		{"POST without a CSRF token", post(open.URL, "/api/v1/jobs/x/retry"), 403},
		{"POST with a wrong CSRF token", post(open.URL, "/api/v1/jobs/x/retry", "X-CSRF-Token", "guess"), 403},
		{"POST with the CSRF token", post(open.URL, "/api/v1/jobs/x/retry", "X-CSRF-Token", csrf), 409},
		{"POST read-only", post(readOnly.URL, "/api/v1/jobs/x/retry", "X-CSRF-Token", csrfToken(t, readOnly.URL)), 403},
		{"GET with a foreign Host", status(t, open.URL+"/api/v1/status", "Host", "evil.example:80"), 403},
		{"GET without the token", status(t, guarded.URL+"/api/v1/status"), 401},
		{"GET with a wrong token", status(t, guarded.URL+"/api/v1/status", "Authorization", "Bearer nope"), 401},
		{"GET with the token", status(t, guarded.URL+"/api/v1/status", "Authorization", "Bearer s3cret"), 200},
		{"GET with the token, the scheme in lower case", status(t, guarded.URL+"/api/v1/status", "Authorization", "bearer s3cret"), 200},
		{"GET /metrics without the token", status(t, guarded.URL+"/metrics"), 401},
		{"GET the page with the token cookie", status(t, guarded.URL+"/", "Cookie", "queuectl_token=s3cret"), 200},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.what, tc.got, tc.want)
		}
	}
	// A browser without the token is sent to the login form.
	req, _ := http.NewRequest("GET", guarded.URL+"/jobs", nil)
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fjobs" {
		t.Errorf("page without the token = %d to %q, want 303 to /login?next=%%2Fjobs", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestSignInLeadsBack: a link to a page of a dashboard with a token, opened
// by a browser not signed in yet, leads through the sign-in form to that
// page, not to the overview; a next address off the dashboard leads home.
func TestSignInLeadsBack(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "x", Command: "true"})
	guarded := h.serve(t, serve.Options{Token: "s3cret"})
	roundTrip := func(req *http.Request) (int, string, string) {
		t.Helper()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		return resp.StatusCode, resp.Header.Get("Location"), body.String()
	}
	req, _ := http.NewRequest("GET", guarded.URL+"/jobs/x?attempt=1", nil)
	req.Header.Set("Accept", "text/html")
	code, login, _ := roundTrip(req)
	if code != http.StatusSeeOther || login != "/login?next=%2Fjobs%2Fx%3Fattempt%3D1" {
		t.Fatalf("GET /jobs/x?attempt=1 without the token = %d to %q, want 303 to /login?next=%%2Fjobs%%2Fx%%3Fattempt%%3D1", code, login)
	}
	_, form := get(t, guarded.URL+login)
	if !strings.Contains(form, `name="next" value="/jobs/x?attempt=1"`) {
		t.Errorf("GET %s: the form does not carry next /jobs/x?attempt=1:\n%s", login, form)
	}
	signIn := func(next string) string {
		req, _ := http.NewRequest("POST", guarded.URL+"/login", strings.NewReader(url.Values{"token": {"s3cret"}, "next": {next}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		code, to, _ := roundTrip(req)
		if code != http.StatusSeeOther {
			t.Errorf("POST /login with next %q = %d, want 303", next, code)
		}
		return to
	}
	for next, want := range map[string]string{"/jobs/x?attempt=1": "/jobs/x?attempt=1", "": "/",
		"//evil.example/": "/", "https://evil.example/": "/", `/\evil.example/`: "/", "jobs": "/"} {
		if got := signIn(next); got != want {
			t.Errorf("POST /login with next %q leads to %q, want %q", next, got, want)
		}
	}
}

func status(t *testing.T, url string, header ...string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, _ := do(t, req)
	return resp.StatusCode
}

// TestEscaping: ids, commands, errors and output never become markup, and
// logs are plain text the browser may not sniff.
func TestEscaping(t *testing.T) {
	h := newHome(t)
	const xss = `<script>alert(1)</script>`
	one := 1
	h.enqueue(t, claim.NewJob{ID: "xss", Command: "echo '" + xss + "'; echo '<img src=x onerror=alert(2)>' >&2; exit 1", MaxRetries: &one})
	h.worker(t, 1)
	h.waitState(t, "xss", claim.Dead)
	ts := h.serve(t, serve.Options{})
	for _, path := range []string{"/", "/jobs", "/jobs/xss", "/jobs/xss?stream=stderr", "/dlq"} {
		_, body := get(t, ts.URL+path, "Accept", "text/html")
		if strings.Contains(body, xss) || strings.Contains(body, "<img src=x") {
			t.Errorf("GET %s carries the command as markup:\n%s", path, body)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("GET %s does not show the command as text", path)
		}
	}
	resp, body := get(t, ts.URL+"/jobs/xss/runs/1/stdout")
	if body != xss+"\n" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("log = %q, Content-Type %q, X-Content-Type-Options %q; want the output as nosniff text/plain",
			body, resp.Header.Get("Content-Type"), resp.Header.Get("X-Content-Type-Options"))
	}
}

// TestLogsOnlyFromTheHome: a log file or job directory that is a symlink
// is refused, and run paths in the store are never followed.
func TestLogsOnlyFromTheHome(t *testing.T) {
	h := newHome(t)
	one := 1
	h.enqueue(t, claim.NewJob{ID: "a", Command: "echo a", MaxRetries: &one})
	h.enqueue(t, claim.NewJob{ID: "b", Command: "echo b", MaxRetries: &one})
	h.worker(t, 1)
	h.waitState(t, "a", claim.Completed)
	h.waitState(t, "b", claim.Completed)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("private\n"), 0o600)
	logs := filepath.Join(h.dir, "logs")
	os.Remove(filepath.Join(logs, "a", "1.out"))
	if err := os.Symlink(secret, filepath.Join(logs, "a", "1.out")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(logs, "b"))
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(logs, "b")); err != nil {
		t.Fatal(err)
	}
	ts := h.serve(t, serve.Options{})
	for _, path := range []string{"/jobs/a/runs/1/stdout", "/jobs/b/runs/1/stdout", "/jobs/a", "/jobs/b",
		"/jobs/a/runs/1/..%2f..%2fqueue.db", "/jobs/..%2f..%2fetc/runs/1/stdout"} {
		resp, body := get(t, ts.URL+path)
		if strings.Contains(body, "private") || resp.StatusCode == http.StatusOK && strings.Contains(path, "runs") {
			t.Errorf("GET %s = %d %q: served what is outside logs/", path, resp.StatusCode, body)
		}
	}
}

// TestRejectedFiles: the list is `rejected list --json`; retry moves a file
// back into the spool, and the errors are the CLI's.
func TestRejectedFiles(t *testing.T) {
	h := newHome(t)
	rejected := filepath.Join(h.dir, "rejected")
	os.WriteFile(filepath.Join(rejected, "broken.json"), []byte(`{"command": `), 0o600)
	os.WriteFile(filepath.Join(rejected, "broken.json.reason"), []byte("broken.json: unexpected end of JSON <b>input</b>\nfix: finish the object\n"), 0o600)
	ts := h.serve(t, serve.Options{})
	_, body := get(t, ts.URL+"/api/v1/rejected")
	if want, _ := h.cli(t, "rejected", "list", "--json"); body != want {
		t.Errorf("GET /api/v1/rejected =\n%s\nrejected list --json =\n%s", body, want)
	}
	_, page := get(t, ts.URL+"/rejected", "Accept", "text/html")
	if !strings.Contains(page, "&lt;b&gt;input&lt;/b&gt;") || !strings.Contains(page, "fix: finish the object") {
		t.Errorf("the rejected page does not show the reason as text:\n%s", page)
	}
	post := poster(t, ts.URL)
	if code, body := post("/api/v1/rejected/broken.json/retry"); code != http.StatusNoContent {
		t.Fatalf("retry = %d %s, want 204", code, body)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "spool", "broken.json")); err != nil {
		t.Errorf("after retry: %v", err)
	}
	if code, _ := post("/api/v1/rejected/broken.json/retry"); code != http.StatusNotFound {
		t.Errorf("second retry = %d, want 404", code)
	}
	if _, code := h.cli(t, "rejected", "retry", "broken.json"); code != 3 {
		t.Errorf("rejected retry of a file that is gone: exit %d, want 3", code)
	}
}

// TestJobPageEmptyLog: the log of a finished run's stream that printed
// nothing is the line saying so, not an empty log box above it.
func TestJobPageEmptyLog(t *testing.T) {
	h := newHome(t)
	one := 1
	h.enqueue(t, claim.NewJob{ID: "quiet", Command: "exit 3", MaxRetries: &one})
	h.worker(t, 1)
	h.waitState(t, "quiet", claim.Dead)
	ts := h.serve(t, serve.Options{})
	_, page := get(t, ts.URL+"/jobs/quiet", "Accept", "text/html")
	if !strings.Contains(page, "This stream printed nothing.") || strings.Contains(page, `<pre class="log"`) {
		t.Errorf("job page of a run that printed nothing: want the line saying so and no log box:\n%s", page)
	}
}

// TestJobNamesWhatItRanAfter: a finished job's page links the jobs it ran
// after, and its API object names them, once nothing is left to wait on.
func TestJobNamesWhatItRanAfter(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "first", Command: "true"})
	h.enqueue(t, claim.NewJob{ID: "second", Command: "true", After: []string{"first"}})
	h.worker(t, 1)
	h.waitState(t, "second", claim.Completed)
	ts := h.serve(t, serve.Options{})
	_, page := get(t, ts.URL+"/jobs/second", "Accept", "text/html")
	if !strings.Contains(page, `<dt>after</dt><dd><a class="id" href="/jobs/first">first</a></dd>`) {
		t.Errorf("page of a job run after first: want a link to first under after:\n%s", page)
	}
	_, body := get(t, ts.URL+"/api/v1/jobs/second")
	var o struct{ After []string }
	if err := json.Unmarshal([]byte(body), &o); err != nil || len(o.After) != 1 || o.After[0] != "first" {
		t.Errorf("GET /api/v1/jobs/second: after = %v (%v), want [first]:\n%s", o.After, err, body)
	}
}

// TestRejectedPageReadOnly: a read-only rejected page has no Retry
// button, so it does not tell to press one: it names the command.
func TestRejectedPageReadOnly(t *testing.T) {
	h := newHome(t)
	rejected := filepath.Join(h.dir, "rejected")
	os.WriteFile(filepath.Join(rejected, "broken.json"), []byte(`{"command": `), 0o600)
	os.WriteFile(filepath.Join(rejected, "broken.json.reason"), []byte("broken.json: unexpected end of JSON input\n"), 0o600)
	for _, tc := range []struct {
		readOnly bool
		want     string
	}{
		{false, "press Retry"},
		{true, "queuectl rejected retry NAME"},
	} {
		ts := h.serve(t, serve.Options{ReadOnly: tc.readOnly})
		_, page := get(t, ts.URL+"/rejected", "Accept", "text/html")
		if !strings.Contains(page, tc.want) || tc.readOnly && strings.Contains(page, "press Retry") {
			t.Errorf("rejected page, read-only %v: want %q (and no button named when there is none):\n%s", tc.readOnly, tc.want, page)
		}
	}
}

// TestSchedules: the list is `schedule list --json`, and pause and resume
// change what the CLI sees.
func TestSchedules(t *testing.T) {
	h := newHome(t)
	if out, code := h.cli(t, "schedule", "add", "nightly", "--cron", "0 3 * * *", "--command", "echo '<b>hi</b>'"); code != 0 {
		t.Fatalf("schedule add: exit %d %s", code, out)
	}
	ts := h.serve(t, serve.Options{})
	same := func(when string) {
		t.Helper()
		_, body := get(t, ts.URL+"/api/v1/schedules")
		if want, _ := h.cli(t, "schedule", "list", "--json"); body != want {
			t.Errorf("%s: GET /api/v1/schedules =\n%s\nschedule list --json =\n%s", when, body, want)
		}
	}
	same("added")
	_, page := get(t, ts.URL+"/schedules", "Accept", "text/html")
	if !strings.Contains(page, "echo &#39;&lt;b&gt;hi&lt;/b&gt;&#39;") || !strings.Contains(page, `action="/schedules/nightly/pause"`) {
		t.Errorf("the schedules page lacks the schedule or its pause button:\n%s", page)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/api/v1/schedules/nightly/pause", nil)
	req.Header.Set("X-CSRF-Token", csrfToken(t, ts.URL))
	if resp, body := do(t, req); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"paused": true`) {
		t.Errorf("pause = %d %s", resp.StatusCode, body)
	}
	same("paused")
	req, _ = http.NewRequest("POST", ts.URL+"/api/v1/schedules/nope/resume", nil)
	req.Header.Set("X-CSRF-Token", csrfToken(t, ts.URL))
	if resp, _ := do(t, req); resp.StatusCode != http.StatusNotFound {
		t.Errorf("resume of an unknown schedule = %d, want 404", resp.StatusCode)
	}
}

// TestSteering: cancel, restart and rm answer as the CLI's verbs do, and a
// paused queue shows in /api/v1/status as in `status --json`.
func TestSteering(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "a", Command: "true", Queue: "q"})
	h.enqueue(t, claim.NewJob{ID: "b", Command: "true", Queue: "q"})
	ts := h.serve(t, serve.Options{})
	post := poster(t, ts.URL)
	for _, tc := range []struct {
		path   string
		status int
		state  string   // the job's state after, when 200
		args   []string // the CLI's verb for the same, on a job in the same state
		exit   int
	}{
		{"/api/v1/jobs/a/cancel", 200, "canceled", nil, 0},
		{"/api/v1/jobs/a/cancel", 200, "canceled", []string{"cancel", "a"}, 0},
		{"/api/v1/jobs/b/rm", 409, "", []string{"rm", "b"}, 4},
		{"/api/v1/jobs/b/restart", 409, "", []string{"restart", "b"}, 4},
		{"/api/v1/jobs/a/restart", 200, "pending", nil, 0},
		{"/api/v1/jobs/a/cancel", 200, "canceled", nil, 0},
		{"/api/v1/jobs/a/rm", 204, "", nil, 0},
		{"/api/v1/jobs/a/rm", 404, "", []string{"rm", "a"}, 3},
		{"/api/v1/jobs/b/explode", 404, "", nil, 0},
	} {
		status, body := post(tc.path)
		if status != tc.status {
			t.Errorf("POST %s = %d %s, want %d", tc.path, status, body, tc.status)
			continue
		}
		if tc.state != "" && !strings.Contains(body, `"state": "`+tc.state+`"`) {
			t.Errorf("POST %s: job not %s:\n%s", tc.path, tc.state, body)
		}
		if tc.args != nil {
			if _, code := h.cli(t, tc.args...); code != tc.exit {
				t.Errorf("queuectl %s: exit %d, want %d as for HTTP %d", strings.Join(tc.args, " "), code, tc.exit, tc.status)
			}
		}
	}
	for _, step := range []struct{ path, paused string }{
		{"/api/v1/queues/q/pause", `["q"]`},
		{"/api/v1/queues/q/resume", `[]`},
		{"/api/v1/queues/*/pause", `["*"]`},
	} {
		if status, body := post(step.path); status != 200 {
			t.Fatalf("POST %s = %d %s", step.path, status, body)
		}
		_, body := get(t, ts.URL+"/api/v1/status")
		want, _ := h.cli(t, "status", "--json")
		var got, cli struct {
			PausedQueues []string `json:"paused_queues"`
		}
		json.Unmarshal([]byte(body), &got)
		json.Unmarshal([]byte(want), &cli)
		g, c := fmt.Sprintf("%q", got.PausedQueues), fmt.Sprintf("%q", cli.PausedQueues)
		if g != step.paused || c != step.paused {
			t.Errorf("after %s: paused_queues %s in the API, %s in status --json; want %s", step.path, g, c, step.paused)
		}
	}
	if _, page := get(t, ts.URL+"/", "Accept", "text/html"); !strings.Contains(page, "Every queue is paused") {
		t.Errorf("the overview does not say every queue is paused")
	}
}

// TestOneQueueUnderEveryQueuePaused: while every queue is paused, the
// overview offers to resume them all, not one queue, which cannot be
// resumed alone (409); and that refusal's hint is not about a job but
// says how to resume every queue.
func TestOneQueueUnderEveryQueuePaused(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "x", Command: "true", Queue: "q"})
	if _, code := h.cli(t, "pause", "--queue", "q"); code != 0 {
		t.Fatalf("queuectl pause --queue q: exit %d", code)
	}
	// A server each: the overview a server read is shared for a second.
	named := h.serve(t, serve.Options{})
	if _, page := get(t, named.URL+"/", "Accept", "text/html"); !strings.Contains(page, `action="/queues/q/resume"`) {
		t.Errorf("queue q paused by name: the overview offers no Resume of q")
	}
	if _, code := h.cli(t, "pause"); code != 0 {
		t.Fatalf("queuectl pause: exit %d", code)
	}
	ts := h.serve(t, serve.Options{})
	if _, page := get(t, ts.URL+"/", "Accept", "text/html"); strings.Contains(page, `action="/queues/q/resume"`) {
		t.Errorf("every queue paused: the overview offers a Resume of q alone, which is refused")
	}
	status, body := poster(t, ts.URL)("/api/v1/queues/q/resume")
	var e struct{ Error, Hint string }
	json.Unmarshal([]byte(body), &e)
	if status != http.StatusConflict || strings.Contains(e.Hint, "/api/v1/jobs/") {
		t.Errorf("POST /api/v1/queues/q/resume under a pause of every queue = %d, hint %q; want 409 with no hint about a job", status, e.Hint)
	}
	// The fix is said once, in the hint: the page shows it beside the error.
	if !strings.Contains(e.Hint, "queuectl resume)") || strings.Contains(e.Error, "queuectl resume") {
		t.Errorf("POST /api/v1/queues/q/resume under a pause of every queue: error %q, hint %q; want the fix (queuectl resume) in the hint alone", e.Error, e.Hint)
	}
}

// TestRetryAndRestartSayWhatCameBack: a retry or restart through the API
// names, as `dlq retry` and `restart` do on stderr, the jobs that came back
// with the job (pending, waiting for it again) and those left dead because
// a live job holds their unique_key.
func TestRetryAndRestartSayWhatCameBack(t *testing.T) {
	h := newHome(t)
	one := 1
	// d fails its first run (max_retries 1: dead after one) and passes the
	// second: the worker that serves dq may run it again before the retry's
	// answer is read, and it must not be dead again by then.
	runs := filepath.Join(t.TempDir(), "runs")
	h.enqueue(t, claim.NewJob{ID: "d", Command: fmt.Sprintf("echo >> %s; [ $(wc -l < %s) -gt 1 ] || exit 3", runs, runs), Queue: "dq", MaxRetries: &one})
	h.enqueue(t, claim.NewJob{ID: "e", Command: "true", Queue: "dq", After: []string{"d"}})
	h.enqueue(t, claim.NewJob{ID: "k", Command: "true", Queue: "dq", After: []string{"d"}, UniqueKey: "nightly"})
	h.enqueue(t, claim.NewJob{ID: "a", Command: "true", Queue: "held"})
	h.enqueue(t, claim.NewJob{ID: "b", Command: "true", Queue: "held", After: []string{"a"}})
	ts := h.serve(t, serve.Options{})
	post := poster(t, ts.URL)
	h.worker(t, 1, "dq")
	h.waitState(t, "e", claim.Dead)
	h.waitState(t, "k", claim.Dead)
	h.enqueue(t, claim.NewJob{ID: "taker", Command: "true", Queue: "held", UniqueKey: "nightly"})
	if status, body := post("/api/v1/jobs/a/cancel"); status != 200 || strings.Contains(body, `"rearmed"`) {
		t.Fatalf("POST cancel a = %d %s; want 200, nothing rearmed", status, body)
	}
	for _, tc := range []struct {
		path string
		want string
	}{
		{"/api/v1/jobs/d/retry", `{"waiting":["e"],"left":["k"]}`},
		{"/api/v1/jobs/a/restart", `{"waiting":["b"]}`},
	} {
		status, body := post(tc.path)
		var got struct {
			State   string          `json:"state"`
			Rearmed json.RawMessage `json:"rearmed"`
		}
		// d may be running again already: the worker serves its queue.
		if err := json.Unmarshal([]byte(body), &got); err != nil || status != 200 || got.State == "dead" || got.State == "canceled" {
			t.Errorf("POST %s = %d %s (%v); want 200, the job back", tc.path, status, body, err)
			continue
		}
		var compact bytes.Buffer
		json.Compact(&compact, got.Rearmed)
		if compact.String() != tc.want {
			t.Errorf("POST %s: rearmed %s, want %s", tc.path, compact.String(), tc.want)
		}
	}
}

// TestCancelSaysWhatDiedWithIt: a cancel through the API names, as `cancel`
// does on stderr, the jobs that died with the job (b waited for it, c for
// b), in the order `cancel` names them, and nothing when none waited.
func TestCancelSaysWhatDiedWithIt(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "a", Command: "true", Queue: "q"})
	h.enqueue(t, claim.NewJob{ID: "b", Command: "true", Queue: "q", After: []string{"a"}})
	h.enqueue(t, claim.NewJob{ID: "c", Command: "true", Queue: "q", After: []string{"b"}})
	h.enqueue(t, claim.NewJob{ID: "alone", Command: "true", Queue: "q"})
	ts := h.serve(t, serve.Options{})
	post := poster(t, ts.URL)
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/api/v1/jobs/a/cancel", []string{"b", "c"}},
		{"/api/v1/jobs/alone/cancel", nil},
	} {
		status, body := post(tc.path)
		var got struct {
			State string          `json:"state"`
			Died  json.RawMessage `json:"died"`
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil || status != 200 || got.State != "canceled" {
			t.Errorf("POST %s = %d %s (%v); want 200, the job canceled", tc.path, status, body, err)
			continue
		}
		var died []string
		if got.Died != nil {
			if err := json.Unmarshal(got.Died, &died); err != nil {
				t.Errorf("POST %s: died %s: %v", tc.path, got.Died, err)
			}
		}
		if (got.Died == nil) != (tc.want == nil) || strings.Join(died, " ") != strings.Join(tc.want, " ") {
			t.Errorf("POST %s: died %s, want %q", tc.path, got.Died, tc.want)
		}
	}
}

// TestOverviewOffersToPauseEveryQueue: the overview's queues have a
// button to pause every queue (docs/dashboard.md, as `queuectl pause`),
// not only one queue at a time; once every queue is paused it offers to
// resume them, and a read-only server offers neither.
func TestOverviewOffersToPauseEveryQueue(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "x", Command: "true", Queue: "q"})
	const form = `action="/queues/%2A/pause"`
	if _, page := get(t, h.serve(t, serve.Options{ReadOnly: true}).URL+"/", "Accept", "text/html"); strings.Contains(page, form) {
		t.Errorf("a read-only overview offers to pause every queue")
	}
	ts := h.serve(t, serve.Options{})
	if _, page := get(t, ts.URL+"/", "Accept", "text/html"); !strings.Contains(page, form) || !strings.Contains(page, "Pause every queue") {
		t.Fatalf("the overview offers no pause of every queue")
	}
	if status, body := poster(t, ts.URL)("/queues/%2A/pause"); status >= 400 {
		t.Fatalf("POST /queues/%%2A/pause = %d %s", status, body)
	}
	if out, _ := h.cli(t, "status", "--json"); !strings.Contains(out, `"paused_queues": [`) || !strings.Contains(out, `"*"`) {
		t.Errorf("after the overview's pause of every queue, status says:\n%s", out)
	}
	// A server of its own: the overview a server read is shared for a second.
	if _, page := get(t, h.serve(t, serve.Options{}).URL+"/", "Accept", "text/html"); strings.Contains(page, form) || !strings.Contains(page, "Resume every queue") {
		t.Errorf("every queue paused: the overview offers to pause them again, or not to resume them")
	}
}

// TestPageNotFoundHintsAtPages: an error on a page (an unknown job's page)
// points at the page that lists them, not at the API; the API's error at
// the API.
func TestPageNotFoundHintsAtPages(t *testing.T) {
	h := newHome(t)
	ts := h.serve(t, serve.Options{})
	if resp, page := get(t, ts.URL+"/jobs/nosuchjob", "Accept", "text/html"); resp.StatusCode != http.StatusNotFound ||
		!strings.Contains(page, "the jobs there are: /jobs (queuectl list)") || strings.Contains(page, "/api/v1/jobs") {
		t.Errorf("GET /jobs/nosuchjob = %d, page:\n%s\nwant 404 hinted at /jobs", resp.StatusCode, page)
	}
	if resp, body := get(t, ts.URL+"/api/v1/jobs/nosuchjob"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "GET /api/v1/jobs (queuectl list)") {
		t.Errorf("GET /api/v1/jobs/nosuchjob = %d %s; want 404 hinted at GET /api/v1/jobs", resp.StatusCode, body)
	}
}

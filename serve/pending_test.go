package serve_test

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// pendingHome is a home whose pending jobs wait for every reason there is,
// with a held job beside them and no worker: later (scheduled), second
// (waiting on first), mail-1 (paused), kept (held), and first, runnable.
func pendingHome(t *testing.T) *home {
	t.Helper()
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "later", Command: "make report", Delay: time.Hour})
	h.enqueue(t, claim.NewJob{ID: "first", Command: "make build"})
	h.enqueue(t, claim.NewJob{ID: "second", Command: "make test", After: []string{"first"}})
	h.enqueue(t, claim.NewJob{ID: "mail-1", Command: "send-mail", Queue: "mail"})
	h.enqueue(t, claim.NewJob{ID: "kept", Command: "echo kept"})
	if _, code := h.cli(t, "pause", "--queue", "mail"); code != 0 {
		t.Fatalf("pause --queue mail: exit %d", code)
	}
	if _, code := h.cli(t, "hold", "kept"); code != 0 {
		t.Fatalf("hold kept: exit %d", code)
	}
	return h
}

// TestAPIPendingReasons: /api/v1/status counts pending jobs by reason as
// `status --json` does.
func TestAPIPendingReasons(t *testing.T) {
	h := pendingHome(t)
	ts := h.serve(t, serve.Options{})
	_, body := get(t, ts.URL+"/api/v1/status")
	want, _ := h.cli(t, "status", "--json")
	if noHeartbeat(body) != noHeartbeat(want) {
		t.Errorf("GET /api/v1/status =\n%s\nstatus --json =\n%s", body, want)
	}
	for _, s := range []string{`"scheduled": 1`, `"waiting": 1`, `"paused": 1`, `"held": 1`} {
		if !strings.Contains(body, s) {
			t.Errorf("GET /api/v1/status lacks %s:\n%s", s, body)
		}
	}
}

// TestAPIJobRefs: the API names jobs as the CLI does: a unique prefix of
// an id, or @last; an ambiguous prefix is a 400 listing the candidates.
func TestAPIJobRefs(t *testing.T) {
	h := pendingHome(t)
	h.enqueue(t, claim.NewJob{ID: "nightly-db-1126", Command: "pg_dump app"})
	h.enqueue(t, claim.NewJob{ID: "nightly-mail-1126", Command: "send-mail"})
	ts := h.serve(t, serve.Options{})
	for _, tc := range []struct{ ref, id string }{{"nightly-d", "nightly-db-1126"}, {"@last", "nightly-mail-1126"}, {"lat", "later"}, {"k", "kept"}} {
		resp, body := get(t, ts.URL+"/api/v1/jobs/"+tc.ref)
		want, _ := h.cli(t, "show", "--json", tc.id)
		if resp.StatusCode != http.StatusOK || body != want {
			t.Errorf("GET /api/v1/jobs/%s = %d\n%s\nwant show --json %s:\n%s", tc.ref, resp.StatusCode, body, tc.id, want)
		}
	}
	if resp, body := get(t, ts.URL+"/api/v1/jobs/nightly-"); resp.StatusCode != http.StatusBadRequest ||
		!strings.Contains(body, "nightly-db-1126 nightly-mail-1126") {
		t.Errorf("GET /api/v1/jobs/nightly- = %d %s, want 400 listing both nightly jobs", resp.StatusCode, body)
	}

	csrf := csrfToken(t, ts.URL)
	post := poster(t, ts.URL)
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/api/v1/jobs/nightly-d/hold", 200, `"state": "held"`},
		{"/api/v1/jobs/nightly-d/release", 200, `"state": "pending"`},
		{"/api/v1/jobs/@last/cancel", 200, `"state": "canceled"`},
		{"/api/v1/jobs/nightly-/cancel", 400, "ambiguous"},
		{"/api/v1/jobs/f/release", 409, "not held"},
		{"/api/v1/jobs/nope/hold", 404, "no such job"},
	} {
		if status, body := post(tc.path); status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("POST %s = %d %s, want %d with %s", tc.path, status, body, tc.status, tc.want)
		}
	}

	// The job page's events too (it is canceled now: they end at once).
	if resp, body := get(t, ts.URL+"/jobs/@last/events"); resp.StatusCode != http.StatusOK ||
		!strings.Contains(body, "event: end") || !strings.Contains(body, `"state":"canceled"`) {
		t.Errorf("GET /jobs/@last/events = %d %q, want the end of canceled nightly-mail-1126", resp.StatusCode, body)
	}

	// The page's form: back to the job's own page, by its whole id.
	form := url.Values{"csrf": {csrf}}
	req, _ := http.NewRequest("POST", ts.URL+"/jobs/fir/hold", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/jobs/first" {
		t.Errorf("POST /jobs/fir/hold = %d to %q, want 303 to /jobs/first", resp.StatusCode, resp.Header.Get("Location"))
	}
	if j, _ := h.store.Get(t.Context(), "first"); j.State != claim.Held {
		t.Errorf("first is %s after the page's hold, want held", j.State)
	}
}

// runningFor matches a running job's row on the overview: its id and how
// long it has run ("4s", "2m").
var runningFor = regexp.MustCompile(`^busy [0-9]+[smhd]`)

// containsLine reports whether text has line as one of its lines.
func containsLine(text, line string) bool {
	return slices.Contains(strings.Split(text, "\n"), line)
}

// TestTilesOpenTheirReasonsJobs: each of the overview's pending tiles
// (runnable, and a reason) opens the jobs page listing the pending jobs of
// that reason only, and the API lists the same by ?reason; a reason that
// is none is a 400.
func TestTilesOpenTheirReasonsJobs(t *testing.T) {
	h := pendingHome(t)
	ts := h.serve(t, serve.Options{})
	_, page := get(t, ts.URL+"/", "Accept", "text/html")
	tileRE := regexp.MustCompile(`<a class="tile [^"]*" href="([^"]*)"[^>]*><span class="n">\d+</span><span class="k">([a-z]+)</span>`)
	idRE := regexp.MustCompile(`<td class="id"><a href="[^"]*">([^<]+)</a>`)
	hrefs := map[string]string{}
	for _, m := range tileRE.FindAllStringSubmatch(page, -1) {
		hrefs[m[2]] = strings.ReplaceAll(m[1], "&amp;", "&")
	}
	for key, want := range map[string]string{"runnable": "first", "scheduled": "later", "waiting": "second", "paused": "mail-1"} {
		href, ok := hrefs[key]
		if !ok {
			t.Errorf("the overview has no %s tile: %v", key, hrefs)
			continue
		}
		_, jobs := get(t, ts.URL+href, "Accept", "text/html")
		var ids []string
		for _, m := range idRE.FindAllStringSubmatch(jobs, -1) {
			ids = append(ids, m[1])
		}
		if !slices.Equal(ids, []string{want}) {
			t.Errorf("the %s tile opens %s, which lists %v; want [%s]", key, href, ids, want)
		}
		if !strings.Contains(jobs, `<option selected>`+key+`</option>`) {
			t.Errorf("%s: the reason filter does not show %s chosen", href, key)
		}
		_, api := get(t, ts.URL+"/api/v1/jobs?reason="+key)
		if strings.Count(api, `"id": `) != 1 || !strings.Contains(api, `"id": "`+want+`"`) {
			t.Errorf("GET /api/v1/jobs?reason=%s =\n%s\nwant job %s only", key, api, want)
		}
	}
	if resp, body := get(t, ts.URL+"/api/v1/jobs?reason=stuck"); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `no reason \"stuck\"`) {
		t.Errorf("GET /api/v1/jobs?reason=stuck: %d\n%s\nwant 400 saying there is no such reason", resp.StatusCode, body)
	}
}

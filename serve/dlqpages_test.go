package serve_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// /api/v1/dlq pages as /api/v1/jobs does (limit, newest, after, the next
// page in the Link header), as dlq list takes --limit and --newest: it
// answered every dead job in one response (4,000 dead jobs: 2 MB in
// 1.2 s) and refused limit=5.
func TestAPIDLQPagesWithLinks(t *testing.T) {
	h := newHome(t)
	one := 1
	for i := range 7 {
		h.enqueue(t, claim.NewJob{ID: fmt.Sprintf("d%d", i), Command: "exit 3", MaxRetries: &one})
	}
	h.enqueue(t, claim.NewJob{ID: "alive", Command: "true", Queue: "later"})
	h.worker(t, 4, "default")
	for i := range 7 {
		h.waitState(t, fmt.Sprintf("d%d", i), claim.Dead)
	}
	ts := h.serve(t, serve.Options{})
	for _, tc := range []struct{ query, want string }{
		{"", "d0 d1 d2 d3 d4 d5 d6"},
		{"limit=3", "d0 d1 d2 | d3 d4 d5 | d6"},
		{"limit=3&newest=1", "d6 d5 d4 | d3 d2 d1 | d0"},
	} {
		var pages []string
		next := ts.URL + "/api/v1/dlq?" + tc.query
		for next != "" && len(pages) < 10 {
			resp, body := get(t, next)
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d %s", next, resp.StatusCode, body)
			}
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
			t.Errorf("pages of /api/v1/dlq?%s = %s, want %s", tc.query, got, tc.want)
		}
	}
}

// The dead letters page counts its jobs as dead jobs: one made dead by a
// dependency used up no retry, and "1 jobs" is no English.
func TestDLQPageSaysDeadJobs(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "gate", Command: "true", Queue: "later"})
	h.enqueue(t, claim.NewJob{ID: "after-gate", Command: "true", After: []string{"gate"}})
	if _, code := h.cli(t, "cancel", "gate"); code != 0 {
		t.Fatalf("queuectl cancel gate: exit %d", code)
	}
	h.waitState(t, "after-gate", claim.Dead)
	ts := h.serve(t, serve.Options{})
	_, page := get(t, ts.URL+"/dlq", "Accept", "text/html")
	if !strings.Contains(page, "<small>1 dead job</small>") {
		t.Errorf("/dlq with one job dead of a canceled dependency: want it counted as \"1 dead job\":\n%s", page)
	}
}

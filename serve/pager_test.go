package serve_test

import (
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// The jobs page's "Older →" and "← Newer" links lead to the next and the
// previous page: with the query escaped whole, "Older →" led back to the
// first page, so a big queue's 51st job could not be reached by paging.
func TestJobsPageLinksPageThrough(t *testing.T) {
	h := newHome(t)
	const n = 120
	for i := range n {
		h.enqueue(t, claim.NewJob{ID: fmt.Sprintf("j%03d", i), Command: "true"})
	}
	ts := h.serve(t, serve.Options{})
	rowRE := regexp.MustCompile(`href="/jobs/(j\d{3})"`)
	linkRE := func(rel string) *regexp.Regexp { return regexp.MustCompile(`rel="` + rel + `" href="([^"]*)"`) }
	follow := func(body, rel string) string {
		m := linkRE(rel).FindStringSubmatch(body)
		if m == nil {
			return ""
		}
		u, _ := url.Parse(ts.URL)
		ref, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil {
			t.Fatalf("%s link %q: %v", rel, m[1], err)
		}
		return u.ResolveReference(ref).String()
	}
	for _, start := range []string{"/jobs", "/jobs?state=pending", "/jobs?queue=default"} {
		seen := map[string]bool{}
		var pages []string
		var firstPage string
		next := ts.URL + start
		for next != "" && len(pages) < 10 {
			_, body := get(t, next)
			var ids []string
			for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
				if !seen[m[1]] {
					ids = append(ids, m[1])
				}
				seen[m[1]] = true
			}
			if len(pages) == 0 {
				firstPage = strings.Join(ids, " ")
			}
			if len(pages) == 1 {
				// Back from the second page: the first again.
				prev := follow(body, "prev")
				if prev == "" {
					t.Errorf("%s: page 2 has no ← Newer link", start)
					break
				}
				_, back := get(t, prev)
				var got []string
				for _, m := range rowRE.FindAllStringSubmatch(back, -1) {
					got = append(got, m[1])
				}
				if strings.Join(got, " ") != firstPage {
					t.Errorf("%s: ← Newer from page 2 shows %.60s…, want page 1 %.60s…", start, strings.Join(got, " "), firstPage)
				}
			}
			pages = append(pages, fmt.Sprintf("%d new", len(ids)))
			next = follow(body, "next")
		}
		if got, want := strings.Join(pages, ", "), "50 new, 50 new, 20 new"; got != want {
			t.Errorf("paging %s by Older →: %s; want %s", start, got, want)
		}
	}
}

// The jobs page shows each job's label, as list does, and filters by it:
// /jobs?label=X counted every job ("2 in all") above the one it showed,
// and its form had no label field, so the filter was hidden from sight.
func TestJobsPageFiltersByLabel(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "tagged", Command: "true", Label: "nightly"})
	h.enqueue(t, claim.NewJob{ID: "plain", Command: "true"})
	ts := h.serve(t, serve.Options{})
	rowRE := regexp.MustCompile(`<tr><td class="id"><a href="/jobs/(\w+)">.*</tr>`)
	rows := func(body string) map[string]string {
		out := map[string]string{}
		for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
			out[m[1]] = m[0]
		}
		return out
	}
	_, all := get(t, ts.URL+"/jobs")
	if row := rows(all)["tagged"]; !strings.Contains(row, `<a href="/jobs?label=nightly">nightly</a>`) {
		t.Errorf("/jobs: the row of tagged is %q, want its label linking to /jobs?label=nightly", row)
	}
	_, body := get(t, ts.URL+"/jobs?label=nightly")
	if got := rows(body); len(got) != 1 || got["tagged"] == "" {
		t.Errorf("/jobs?label=nightly shows %v, want tagged alone", got)
	}
	if strings.Contains(body, "2 in all") || strings.Contains(body, "2 match") {
		t.Errorf("/jobs?label=nightly counts the jobs of every label:\n%s", body)
	}
	if !strings.Contains(body, `name="label" value="nightly"`) {
		t.Errorf("/jobs?label=nightly: the form has no label field holding nightly:\n%s", body)
	}
}

// An id prefix no id can start with ("nightly db", typed into the jobs
// page's search) is said on the jobs page, beside the form that keeps it,
// not on an error page with a hint to read the docs.
func TestJobsPageImpossiblePrefix(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "nightly-db", Command: "true"})
	ts := h.serve(t, serve.Options{})
	resp, body := get(t, ts.URL+"/jobs?prefix=nightly+db", "Accept", "text/html")
	if resp.StatusCode != 400 || !strings.Contains(body, `name="prefix" value="nightly db"`) ||
		!strings.Contains(body, "no job id starts with &#34;nightly db&#34;") || strings.Contains(body, "docs/dashboard.md") {
		t.Errorf("GET /jobs?prefix=nightly+db = %d; want 400 with the jobs page's form holding the prefix and why no id starts so:\n%s", resp.StatusCode, body)
	}
}

// Each page's "JSON API" link leads to the API's answer for what the page
// shows: it led to /api/v1/status from every page, a job's too.
func TestPagesLinkTheirJSON(t *testing.T) {
	h := newHome(t)
	h.enqueue(t, claim.NewJob{ID: "x", Command: "true"})
	ts := h.serve(t, serve.Options{})
	for page, want := range map[string]string{
		"/":                          "/api/v1/status",
		"/jobs":                      "/api/v1/jobs?newest=1",
		"/jobs?state=pending&label=": "/api/v1/jobs?newest=1&amp;state=pending",
		"/jobs/x":                    "/api/v1/jobs/x",
		"/dlq":                       "/api/v1/dlq?newest=1",
		"/rejected":                  "/api/v1/rejected",
		"/schedules":                 "/api/v1/schedules",
	} {
		_, body := get(t, ts.URL+page, "Accept", "text/html")
		if !strings.Contains(body, `<a href="`+want+`">JSON API</a>`) {
			m := regexp.MustCompile(`<a href="([^"]*)">JSON API</a>`).FindStringSubmatch(body)
			t.Errorf("GET %s: JSON API links to %v, want %s", page, m, want)
			continue
		}
		if resp, body := get(t, ts.URL+html.UnescapeString(want)); resp.StatusCode != 200 {
			t.Errorf("GET %s (the JSON API of %s) = %d %s", want, page, resp.StatusCode, body)
		}
	}
}

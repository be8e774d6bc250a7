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

package serve

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
)

// pages holds one template set per page: the layout plus the page's own
// "content", parsed once from the embedded files.
type pages map[string]*template.Template

func parsePages() (pages, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	out := pages{}
	for _, path := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(path, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(files, path)
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// funcs are the template helpers. Every one returns plain strings: the
// template escapes them where they land.
var funcs = template.FuncMap{
	"clip": func(n int, s string) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		return string(r[:n-1]) + "…"
	},
	"oneline": func(s string) string {
		return strings.Join(strings.Fields(s), " ")
	},
	"query": func(kv ...string) template.URL {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] != "" {
				v.Set(kv[i], kv[i+1])
			}
		}
		return template.URL("?" + v.Encode())
	},
	"pathescape": url.PathEscape,
	// plural is one when n is 1, else many: "1 worker", "3 workers".
	"plural": func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	},
	"exit": func(code *int) string {
		if code == nil {
			return "-"
		}
		return fmt.Sprint(*code)
	},
	"states":      func() []claim.State { return claim.States },
	"list":        func(s ...string) []string { return s },
	"rejectedURL": rejectedURL,
	"scheduleURL": scheduleURL,
	"queueURL":    queueURL,
}

// frame is what every page gets: the navigation's numbers, the CSRF token
// for its forms, what the action that led here said (Notice, see notices),
// and Body, the page's own data.
type frame struct {
	Page     string
	Title    string
	CSRF     string
	ReadOnly bool
	Now      string
	Notice   []string
	Body     any
	API      string // the API's address of what the page shows
}

// render writes page name with body, and the notice r's ?notice= names:
// what the action that sent the browser here said. It renders into a
// buffer first, so a template error is a clean 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, body any) {
	page, err := s.page(name, body, s.notices.get(r.URL.Query().Get("notice"), s.now()))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writePage(w, status, page)
}

// page renders page name with body and notice, dated now.
func (s *Server) page(name string, body any, notice []string) ([]byte, error) {
	t, ok := s.pages[name]
	if !ok {
		return nil, fmt.Errorf("no page %s", name)
	}
	f := frame{Page: name, Title: titleOf(name, body), CSRF: s.csrf, ReadOnly: s.readOnly,
		Now: s.now().UTC().Format(time.RFC3339), Notice: notice, Body: body, API: apiOf(body)}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", f); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

func writePage(w http.ResponseWriter, status int, page []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(page)
}

type titled interface{ title() string }

func titleOf(name string, body any) string {
	if t, ok := body.(titled); ok {
		return t.title()
	}
	return name
}

// withAPI is a page whose data the API answers at an address of its own.
type withAPI interface{ api() string }

// apiOf is where the footer's "JSON API" leads: the page's own data, else
// the status.
func apiOf(body any) string {
	if a, ok := body.(withAPI); ok {
		return a.api()
	}
	return "/api/v1/status"
}

// printer renders times and counts in the CLI's words.
func (s *Server) printer() report.Printer {
	return report.Printer{Now: s.now, Host: s.host, FromTail: s.fromTail,
		Printed: func(r claim.Run, stderr bool) bool { return run.Log{Run: r, Stderr: stderr}.Printed() }}
}

type errorView struct {
	Status int
	Error  string
	Hint   string
}

func (v errorView) title() string { return http.StatusText(v.Status) }

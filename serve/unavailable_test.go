package serve_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
	"github.com/queuectl/queuectl/serve"
)

// relay forwards TCP connections to a PostgreSQL server until cut, which
// closes its listener and every connection: the server is gone, as far
// as what connects through it can tell.
type relay struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln}
	t.Cleanup(r.cut)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, up)
			r.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	return r
}

func (r *relay) cut() {
	r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
}

// TestStoreUnreachable: when the PostgreSQL server cannot be reached, the
// pages, the API and /metrics answer 503 Service Unavailable with the
// store's own hint (what to check), as the CLI prints it, not a bare 500.
func TestStoreUnreachable(t *testing.T) {
	dsn := pgtest.DSN(t)
	h := newHome(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	r := newRelay(t, u.Host)
	u.Host = r.ln.Addr().String()
	s, err := claim.Open(u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h.store = s
	h.enqueue(t, claim.NewJob{ID: "nightly-db", Command: "pg_dump app"})
	ts := h.serve(t, serve.Options{})
	if resp, _ := get(t, ts.URL+"/jobs/nightly-db", "Accept", "text/html"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /jobs/nightly-db with the server up: %s", resp.Status)
	}
	r.cut()

	const hint = "check that the PostgreSQL server is running"
	for _, path := range []string{"/", "/jobs", "/jobs/nightly-db", "/dlq"} {
		resp, body := get(t, ts.URL+path, "Accept", "text/html")
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "database unavailable") || !strings.Contains(body, hint) {
			t.Errorf("GET %s with the server gone: %s, want 503 saying the database is unavailable and %q:\n%s", path, resp.Status, hint, body)
		}
	}
	for _, path := range []string{"/api/v1/status", "/api/v1/jobs/nightly-db", "/metrics"} {
		resp, body := get(t, ts.URL+path)
		var e struct{ Error, Hint string }
		json.Unmarshal([]byte(body), &e)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(e.Hint, hint) {
			t.Errorf("GET %s with the server gone: %s %s, want 503 with the hint %q", path, resp.Status, body, hint)
		}
	}
}

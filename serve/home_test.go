package serve_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/cli"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/serve"
	"github.com/queuectl/queuectl/spool"
)

// home is a queuectl home in a temporary directory with its store open.
type home struct {
	dir   string
	store *claim.Store
}

func newHome(tb testing.TB) *home {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := spool.DirsOf(dir).Make(); err != nil {
		tb.Fatal(err)
	}
	s, err := claim.Open(filepath.Join(dir, "queue.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return &home{dir: dir, store: s}
}

func (h *home) enqueue(tb testing.TB, nj claim.NewJob) claim.Job {
	tb.Helper()
	r, err := h.store.Enqueue(context.Background(), nj)
	if err != nil {
		tb.Fatalf("Enqueue(%+v) = %v", nj, err)
	}
	return r.Job
}

// cli runs queuectl in-process on this home and returns its stdout and exit code.
func (h *home) cli(tb testing.TB, args ...string) (string, int) {
	tb.Helper()
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), append([]string{"queuectl", "--home", h.dir}, args...), strings.NewReader(""), &out, &errOut)
	return out.String(), code
}

// worker runs a worker with slots slots on the home until the test ends,
// serving queues (none: every queue).
func (h *home) worker(tb testing.TB, slots int, queues ...string) {
	tb.Helper()
	cfg, err := h.store.Config(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	cfg.PollInterval = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	w := &run.Worker{Store: h.store, Config: cfg, Slots: slots, Queues: queues, LogDir: filepath.Join(h.dir, "logs"),
		OnDead: func(ctx context.Context, j claim.Job) {
			runs, _ := h.store.Runs(ctx, j.ID)
			spool.WriteDead(spool.DirsOf(h.dir).Dead, j, runs)
		}}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, run.ErrInterrupted) {
			tb.Errorf("worker: %v", err)
		}
	})
	h.waitFor(tb, "a live worker", func() bool {
		ws, err := h.store.Workers(context.Background())
		return err == nil && len(ws) > 0
	})
}

// waitFor polls cond until it holds, failing the test after 20 seconds.
func (h *home) waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *home) waitState(tb testing.TB, id string, want claim.State) {
	tb.Helper()
	h.waitFor(tb, "job "+id+" to be "+string(want), func() bool {
		j, err := h.store.Get(context.Background(), id)
		return err == nil && j.State == want
	})
}

// serve starts a Server on the home behind an httptest server.
func (h *home) serve(tb testing.TB, o serve.Options) *httptest.Server {
	tb.Helper()
	o.Store, o.Home = h.store, h.dir
	if o.Lease == 0 {
		o.Lease = 30 * time.Second
	}
	s, err := serve.New(o)
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(s)
	tb.Cleanup(ts.Close)
	tb.Cleanup(s.Close) // first: ends the event streams ts.Close would wait for
	return ts
}

// get fetches url and returns the response with its body read.
func get(tb testing.TB, url string, header ...string) (*http.Response, string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(tb, req)
}

func do(tb testing.TB, req *http.Request) (*http.Response, string) {
	tb.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, string(body)
}

package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	_ "github.com/queuectl/queuectl/claim/sqlite"
	"github.com/queuectl/queuectl/spool"
)

// TestConcurrentReadersShareOneRead: many requests for the overview and
// /metrics at once read the store once each, not once per request; the
// clock moving on reads again, and so does an action.
func TestConcurrentReadersShareOneRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := spool.DirsOf(dir).Make(); err != nil {
		t.Fatal(err)
	}
	store, err := claim.Open(filepath.Join(dir, "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Enqueue(context.Background(), claim.NewJob{ID: "a", Command: "true"}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, err := New(Options{Store: store, Home: dir, Lease: 30 * time.Second, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 50
	hit := func(paths ...string) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				path := paths[i%len(paths)]
				req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil)
				req.Header.Set("Accept", "text/html")
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Errorf("GET %s = %d %s", path, rec.Code, rec.Body)
				}
			})
		}
		wg.Wait()
	}
	hit("/", "/metrics")
	if got := s.storeReads(); got != 2 {
		t.Fatalf("%d concurrent requests for / and /metrics read the store %d times, want 2 (once each)", n, got)
	}
	mu.Lock()
	now = now.Add(time.Minute) // past staleFor: the next request waits for a read
	mu.Unlock()
	hit("/metrics")
	if got := s.storeReads(); got != 3 {
		t.Errorf("after the clock moved on, %d scrapes made %d reads in all, want 3", n, got)
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/api/v1/queues/q/pause", nil)
	req.Header.Set("X-CSRF-Token", s.csrf)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST pause = %d %s", rec.Code, rec.Body)
	}
	hit("/metrics")
	if got := s.storeReads(); got != 4 {
		t.Errorf("after an action, %d scrapes made %d reads in all, want 4", n, got)
	}
}

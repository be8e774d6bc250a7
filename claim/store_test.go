package claim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// t0 is where every fake clock starts.
var t0 = time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)

// fakeClock is an injectable Store.Now, safe for concurrent use.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func mustEnqueue(tb testing.TB, s *claim.Store, nj claim.NewJob) claim.Job {
	tb.Helper()
	r, err := s.Enqueue(context.Background(), nj)
	if err != nil {
		tb.Fatalf("Enqueue(%+v) = %v", nj, err)
	}
	if r.Outcome != claim.Created {
		tb.Fatalf("Enqueue(%+v) outcome = %s, want %s", nj, r.Outcome, claim.Created)
	}
	return r.Job
}

func mustGet(tb testing.TB, s *claim.Store, id string) claim.Job {
	tb.Helper()
	j, err := s.Get(context.Background(), id)
	if err != nil {
		tb.Fatalf("Get(%q) = %v", id, err)
	}
	return j
}

func mustRuns(tb testing.TB, s *claim.Store, id string) []claim.Run {
	tb.Helper()
	rs, err := s.Runs(context.Background(), id)
	if err != nil {
		tb.Fatalf("Runs(%q) = %v", id, err)
	}
	return rs
}

// claimant returns a worker slot named id with a 30s lease, logging under
// a temporary directory.
func claimant(tb testing.TB, id string) claim.Claimant {
	return claim.Claimant{WorkerID: id, Host: "testhost", PID: os.Getpid(),
		Lease: 30 * time.Second, LogDir: filepath.Join(tb.TempDir(), "logs")}
}

func mustClaim(tb testing.TB, s *claim.Store, c claim.Claimant) (claim.Job, claim.Run) {
	tb.Helper()
	j, r, err := s.Claim(context.Background(), c)
	if err != nil {
		tb.Fatalf("Claim(%s) = %v", c.WorkerID, err)
	}
	return j, r
}

func intp(n int) *int { return &n }

func TestGetListCounts(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("Get(nope) = %v, want ErrNotFound", err)
		}
		for _, nj := range []claim.NewJob{
			{ID: "a", Command: "true"},
			{ID: "b", Command: "true", Queue: "mail"},
			{ID: "c", Command: "true", Queue: "mail"},
		} {
			mustEnqueue(t, s, nj)
		}
		c := claimant(t, "w1")
		c.Queues = []string{"mail"}
		mustClaim(t, s, c)

		tests := []struct {
			f    claim.Filter
			want string
		}{
			{claim.Filter{}, "a b c"},
			{claim.Filter{State: claim.Pending}, "a c"},
			{claim.Filter{State: claim.Processing}, "b"},
			{claim.Filter{Queue: "mail"}, "b c"},
			{claim.Filter{Queue: "mail", State: claim.Pending}, "c"},
			{claim.Filter{Limit: 2}, "a b"},
			{claim.Filter{State: claim.Dead}, ""},
		}
		for _, tt := range tests {
			js, err := s.List(ctx, tt.f)
			if err != nil {
				t.Fatalf("List(%+v) = %v", tt.f, err)
			}
			if got := ids(js); got != tt.want {
				t.Errorf("List(%+v) = %q, want %q", tt.f, got, tt.want)
			}
		}

		counts, err := s.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[claim.State]int{claim.Pending: 2, claim.Processing: 1, claim.Completed: 0, claim.Failed: 0, claim.Dead: 0}
		for _, st := range claim.States {
			if counts[st] != want[st] {
				t.Errorf("Counts()[%s] = %d, want %d", st, counts[st], want[st])
			}
		}
	})
}

func ids(js []claim.Job) string {
	var out []string
	for _, j := range js {
		out = append(out, j.ID)
	}
	return strings.Join(out, " ")
}

func TestParseState(t *testing.T) {
	for _, st := range claim.States {
		if got, err := claim.ParseState(string(st)); got != st || err != nil {
			t.Errorf("ParseState(%q) = %v, %v, want %v, nil", st, got, err, st)
		}
	}
	for _, in := range []string{"", "Pending", "done", "running"} {
		if _, err := claim.ParseState(in); !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), "want one of") {
			t.Errorf("ParseState(%q) = %v, want ErrInvalid listing the states", in, err)
		}
	}
}

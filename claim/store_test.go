package claim_test

import (
	"context"
	"database/sql"
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

// mustOpenStore opens a new store in a fresh temporary directory; it is
// closed when the test ends.
func mustOpenStore(tb testing.TB) *claim.Store {
	tb.Helper()
	return mustOpenPath(tb, filepath.Join(tb.TempDir(), "queue.db"))
}

// mustOpenPath opens (another) Store on path: a separate *sql.DB.
func mustOpenPath(tb testing.TB, path string) *claim.Store {
	tb.Helper()
	s, err := claim.Open(path)
	if err != nil {
		tb.Fatalf("Open(%q) = %v", path, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// mustOpenClocked opens a store whose clock stands still at t0 until advanced.
func mustOpenClocked(tb testing.TB) (*claim.Store, *fakeClock) {
	tb.Helper()
	s := mustOpenStore(tb)
	clk := &fakeClock{now: t0}
	s.Now = clk.Now
	return s, clk
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

func TestOpenCreatesPrivateWALDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	mustOpenPath(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("database mode = %v, want 0600", perm)
	}
	db := rawDB(t, path)
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
}

func TestOpenMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "queue.db")
	if s, err := claim.Open(path); err == nil {
		s.Close()
		t.Fatalf("Open(%q) = nil error, want one", path)
	}
}

// TestOpenConcurrentFresh: processes starting together on a new home (a
// worker, a watcher, two cron enqueues) all open the new database.
func TestOpenConcurrentFresh(t *testing.T) {
	for range 30 {
		path := filepath.Join(t.TempDir(), "queue.db")
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				<-start
				s, err := claim.Open(path)
				if err != nil {
					t.Errorf("Open(%q) alongside others = %v", path, err)
					return
				}
				s.Close()
			})
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}
		if v := userVersion(t, path); v != schemaVersion {
			t.Fatalf("user_version after concurrent opens = %d, want %d", v, schemaVersion)
		}
	}
}

// rawDB opens the file without claim, to look at or damage it as an older
// or newer binary would.
func rawDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func userVersion(tb testing.TB, path string) int {
	tb.Helper()
	var v int
	if err := rawDB(tb, path).QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

// schemaVersion is the user_version of a database this binary made.
const schemaVersion = 5

func TestMigrationsReopenVersion1(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "queue.db")
	s, err := claim.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, s, claim.NewJob{ID: "kept", Command: "true"})
	if _, _, err := s.SetConfig(ctx, "max-retries", "7"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if v := userVersion(t, path); v != schemaVersion {
		t.Fatalf("user_version after Open = %d, want %d", v, schemaVersion)
	}

	s2 := mustOpenPath(t, path)
	if v := userVersion(t, path); v != schemaVersion {
		t.Errorf("user_version after reopen = %d, want %d", v, schemaVersion)
	}
	if j := mustGet(t, s2, "kept"); j.State != claim.Pending {
		t.Errorf("job after reopen: state %s, want pending", j.State)
	}
	cfg, err := s2.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxRetries != 7 {
		t.Errorf("max-retries after reopen = %d, want 7", cfg.MaxRetries)
	}
}

func TestMigrationsRefuseNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	s, err := claim.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := rawDB(t, path).Exec("PRAGMA user_version = 9"); err != nil {
		t.Fatal(err)
	}
	s, err = claim.Open(path)
	if err == nil {
		s.Close()
		t.Fatal("Open of a database at user_version 9 = nil error, want a refusal")
	}
	for _, want := range []string{"version 9", "newer", "upgrade queuectl"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open error %q does not mention %q", err, want)
		}
	}
	if v := userVersion(t, path); v != 9 {
		t.Errorf("refused database now at user_version %d, want it left at 9", v)
	}
}

func TestGetListCounts(t *testing.T) {
	ctx := t.Context()
	s, _ := mustOpenClocked(t)
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

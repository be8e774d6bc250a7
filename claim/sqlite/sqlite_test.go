package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	_ "github.com/queuectl/queuectl/claim/sqlite"
	"github.com/queuectl/queuectl/claim/sqlite/sqlitetest"
)

// Tests of the SQLite engine's own mechanisms: the file, its pragmas, its
// user_version migrations. Everything a Store promises is tested once per
// engine in claim's conformance suite.

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

func mustEnqueue(tb testing.TB, s *claim.Store, nj claim.NewJob) claim.Job {
	tb.Helper()
	r, err := s.Enqueue(context.Background(), nj)
	if err != nil {
		tb.Fatalf("Enqueue(%+v) = %v", nj, err)
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

// countJobs counts jobs per state the slow way, for comparing with Counts.
func countJobs(tb testing.TB, path string) map[claim.State]int {
	tb.Helper()
	out := map[claim.State]int{}
	for _, st := range claim.States {
		out[st] = 0
	}
	rows, err := rawDB(tb, path).Query("SELECT state, count(*) FROM jobs GROUP BY state")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			tb.Fatal(err)
		}
		out[claim.State(st)] = n
	}
	return out
}

func checkCounts(tb testing.TB, s *claim.Store, step string) {
	tb.Helper()
	got, err := s.Counts(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	if want := countJobs(tb, s.Path()); !maps.Equal(got, want) {
		tb.Errorf("after %s: Counts = %v, want %v", step, got, want)
	}
}

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
const schemaVersion = 20

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
	if _, err := rawDB(t, path).Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s, err = claim.Open(path)
	if err == nil {
		s.Close()
		t.Fatalf("Open of a database at user_version %d = nil error, want a refusal", schemaVersion+1)
	}
	for _, want := range []string{fmt.Sprintf("version %d", schemaVersion+1), "newer", "upgrade queuectl"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open error %q does not mention %q", err, want)
		}
	}
	// doctor's fix and the CLI's hint line come from the error's Hint.
	var newer *claim.NewerSchemaError
	if !errors.As(err, &newer) || !strings.Contains(newer.Hint(), "newer queuectl") {
		t.Errorf("Open error %q is no claim.NewerSchemaError saying to run the newer queuectl", err)
	}
	if v := userVersion(t, path); v != schemaVersion+1 {
		t.Errorf("refused database now at user_version %d, want it left at %d", v, schemaVersion+1)
	}
}

// TestMigrationFromVersion1: a database made by a version-1 binary, with
// jobs in several states, opens with its counts right and version 2.
func TestMigrationFromVersion1(t *testing.T) {
	schema, err := os.ReadFile("schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "queue.db")
	db := rawDB(t, path)
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	for i, st := range []string{"pending", "pending", "processing", "completed", "dead", "completed"} {
		_, err := db.Exec(`INSERT INTO jobs (id, command, state, queue, max_retries, backoff_base,
			run_after, created_at, updated_at) VALUES (?, 'true', ?, ?, 3, 2, 0, 0, 0)`,
			fmt.Sprintf("old-%d", i), st, []string{"default", "builds"}[i%2])
		if err != nil {
			t.Fatal(err)
		}
	}
	// A worker of an older binary, which recorded no lease of its own.
	if _, err := db.Exec(`INSERT INTO workers (id, host, pid, slots, started_at, heartbeat_at)
		VALUES ('old-worker', 'h', 1, 1, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := mustOpenPath(t, path)
	if v := userVersion(t, path); v != schemaVersion {
		t.Errorf("user_version after migration = %d, want %d", v, schemaVersion)
	}
	if ws, err := s.Workers(t.Context()); err != nil || len(ws) != 1 || ws[0].Lease != 0 || ws[0].HeartbeatInterval != 0 {
		t.Errorf("Workers() after migration = %+v, %v; want the old worker, with no lease or interval of its own", ws, err)
	}
	got, err := s.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[claim.State]int{claim.Pending: 2, claim.Processing: 1, claim.Completed: 2, claim.Failed: 0, claim.Dead: 1, claim.Canceled: 0, claim.Held: 0}
	if !maps.Equal(got, want) {
		t.Errorf("Counts after migration = %v, want %v", got, want)
	}
	checkCounts(t, s, "migration")
	// A job of an older binary runs with its worker's umask, as it did.
	if j, err := s.Get(t.Context(), "old-0"); err != nil || j.Umask != nil {
		t.Errorf("Get(old-0) after migration: umask %s, %v; want none", claim.UmaskText(j.Umask), err)
	}
	mustEnqueue(t, s, claim.NewJob{ID: "new", Command: "true"})
	checkCounts(t, s, "enqueue after migration")
}

// TestClaimOfNothingTakesNoLock: a claim that finds nothing to claim
// answers so without the write lock, which another process may hold for a
// long write (here held until the test ends); a claim that finds a job
// waits for the lock as before.
func TestClaimOfNothingTakesNoLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	s := mustOpenPath(t, path)
	mustEnqueue(t, s, claim.NewJob{ID: "later", Command: "true", Delay: time.Hour})
	sqlitetest.WriteLock(t, path) // let go at the test's end
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c := claim.Claimant{WorkerID: "w", Host: "h", PID: os.Getpid(), Lease: time.Minute, LogDir: t.TempDir()}
	if _, _, err := s.Claim(ctx, c); !errors.Is(err, claim.ErrNoJob) {
		t.Fatalf("Claim with nothing runnable, while another connection holds the write lock = %v, want ErrNoJob", err)
	}
}

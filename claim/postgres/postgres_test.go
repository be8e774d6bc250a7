package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
	_ "github.com/queuectl/queuectl/claim/postgres"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// Tests of the PostgreSQL engine's own mechanisms: migrations under the
// advisory lock, LISTEN across a lost connection, the server's errors.
// Everything a Store promises is tested once per engine in claim's
// conformance suite.

func mustOpen(tb testing.TB, dsn string) *claim.Store {
	tb.Helper()
	s, err := claim.Open(dsn)
	if err != nil {
		tb.Fatalf("Open(%q) = %v", dsn, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// query runs one query on dsn outside the store and scans its first row.
func query(tb testing.TB, dsn, sql string, dest ...any) {
	tb.Helper()
	conn, err := pgx.Connect(tb.Context(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(tb.Context(), sql).Scan(dest...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

// TestOpenConcurrentEmpty: processes starting together on an empty
// database all open it; the migrations ran once.
func TestOpenConcurrentEmpty(t *testing.T) {
	for range 5 {
		dsn := pgtest.DSN(t)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				<-start
				s, err := claim.Open(dsn)
				if err != nil {
					t.Errorf("Open alongside others = %v", err)
					return
				}
				s.Close()
			})
		}
		close(start)
		wg.Wait()
		var version, rows int
		query(t, dsn, "SELECT max(version), count(*) FROM queuectl_schema", &version, &rows)
		if version != schemaVersion || rows != 1 {
			t.Fatalf("queuectl_schema after concurrent opens: version %d in %d rows, want %d in 1", version, rows, schemaVersion)
		}
	}
}

// TestMigrateRefusesNewerSchema: a database migrated by a newer queuectl is
// refused with the fix, and left as it is.
func TestMigrateRefusesNewerSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	mustOpen(t, dsn).Close()
	var n int
	query(t, dsn, fmt.Sprintf("UPDATE queuectl_schema SET version = %d RETURNING version", schemaVersion+1), &n)
	s, err := claim.Open(dsn)
	if err == nil {
		s.Close()
		t.Fatalf("Open of a database at schema version %d = nil error, want a refusal", schemaVersion+1)
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
}

// awaitWake fails the test unless ch wakes within 10s of what.
func awaitWake(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no wake-up within 10s of %s", what)
	}
}

// TestChangesAfterTerminatedBackend: the listening connection is killed on
// the server; the listener reconnects, listens again, and a change made
// through another Store wakes the Changes channel.
func TestChangesAfterTerminatedBackend(t *testing.T) {
	dsn := pgtest.DSN(t)
	watcher, other := mustOpen(t, dsn), mustOpen(t, dsn)
	ch, err := watcher.Changes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	listening := func() int {
		var pid int
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			conn, err := pgx.Connect(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			err = conn.QueryRow(t.Context(), `SELECT pid FROM pg_stat_activity
				WHERE query LIKE 'LISTEN %' AND query LIKE '%' || current_schema() || '%'`).Scan(&pid)
			conn.Close(context.Background())
			if err == nil {
				return pid
			}
			time.Sleep(20 * time.Millisecond) // polling the server, with a deadline
		}
		t.Fatal("no backend LISTENs for the store within 30s")
		return 0
	}
	first := listening()
	var terminated bool
	query(t, dsn, "SELECT pg_terminate_backend("+strconv.Itoa(first)+")", &terminated)
	if !terminated {
		t.Fatalf("pg_terminate_backend(%d) = false", first)
	}
	var second int
	for second = listening(); second == first; second = listening() {
	}
	for len(ch) > 0 { // the wake-up of listening again
		<-ch
	}
	if _, err := other.Enqueue(t.Context(), claim.NewJob{ID: "after", Command: "true"}); err != nil {
		t.Fatal(err)
	}
	awaitWake(t, ch, "an Enqueue after the listener's backend was terminated")
}

// TestOpenErrors: a DSN that cannot work fails at Open with a message that
// names what is wrong, never its password; a URL that cannot be read is
// ErrInvalid, an unreachable server and a refusal are ErrUnavailable.
func TestOpenErrors(t *testing.T) {
	server := pgtest.Server(t)
	tests := []struct {
		name, dsn            string
		invalid, unavailable bool
		want                 string
	}{
		{"unparseable", "postgres://%zz", true, false, `invalid percent-encoded token: "%zz"`},
		{"bad port", "postgres://qu:S3cret@127.0.0.1:abc/qdb", true, false, "postgres://qu:xxxxx@127.0.0.1:abc/qdb is not a PostgreSQL URL queuectl can read: invalid port"},
		{"bad sslmode", "postgres://qu@127.0.0.1/qdb?sslmode=bogus&password=S3cret", true, false, "sslmode is invalid"},
		{"unreachable", "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=5", false, true, "127.0.0.1"},
		{"no such role", strings.Replace(server, "postgres@", "no_such_role_q@", 1), false, true, "no_such_role_q"},
		{"no such database", strings.Replace(server, "/postgres?", "/no_such_db_q?", 1) + "&password=S3cret", false, true, "no_such_db_q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := claim.Open(tt.dsn)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) = nil error", tt.dsn)
			}
			if errors.Is(err, claim.ErrInvalid) != tt.invalid || errors.Is(err, claim.ErrUnavailable) != tt.unavailable ||
				!strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "S3cret") {
				t.Errorf("Open(%q) = %v; want ErrInvalid %v, ErrUnavailable %v, naming %q without the password",
					tt.dsn, err, tt.invalid, tt.unavailable, tt.want)
			}
		})
	}
}

// TestRefusedConnectionSaidOnce: pgx tries a server twice under sslmode
// prefer (TLS, then without), and its error lists both attempts; the same
// refusal is said once.
func TestRefusedConnectionSaidOnce(t *testing.T) {
	_, err := claim.Open("postgres://postgres@127.0.0.1:1/postgres?connect_timeout=5")
	if err == nil || strings.Count(err.Error(), "connection refused") != 1 || !errors.Is(err, claim.ErrUnavailable) {
		t.Errorf("Open of a port no server listens on = %v; want the refusal said once, ErrUnavailable", err)
	}
}

// TestOpenSchemeInAnyCase: a URL's scheme is case-insensitive (RFC 3986),
// so PostgreSQL:// names the store postgres:// does, not a SQLite file.
func TestOpenSchemeInAnyCase(t *testing.T) {
	dsn := pgtest.DSN(t)
	if _, err := mustOpen(t, dsn).Enqueue(t.Context(), claim.NewJob{ID: "one", Command: "true"}); err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []string{"PostgreSQL", "POSTGRES"} {
		location := scheme + strings.TrimPrefix(dsn, "postgres")
		if got := claim.EngineFor(location); got != claim.EnginePostgres {
			t.Errorf("EngineFor(%q) = %s, want %s", location, got, claim.EnginePostgres)
		}
		if _, err := mustOpen(t, location).Get(t.Context(), "one"); err != nil {
			t.Errorf("Get(one) on %s: %v", location, err)
		}
	}
}

// schemaVersion is the version of a schema this binary made.
const schemaVersion = 17

// A role that may only read (a monitoring user) opens the store and reads
// its counts: folding the gone backends' count rows, a tidying write, is
// skipped when the role may not write.
func TestReadOnlyRoleReadsCounts(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := mustOpen(t, dsn)
	for range 2 {
		if _, err := s.Enqueue(t.Context(), claim.NewJob{Command: "true"}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	role := "ro_" + schema
	pgtest.Exec(t, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() { pgtest.Exec(t, "DROP OWNED BY "+role+"; DROP ROLE "+role) })
	pgtest.Exec(t, "GRANT USAGE ON SCHEMA "+schema+" TO "+role+"; GRANT SELECT ON ALL TABLES IN SCHEMA "+schema+" TO "+role)
	u.User = url.User(role)
	ro := mustOpen(t, u.String())
	counts, err := ro.Counts(t.Context())
	if err != nil || counts[claim.Pending] != 2 {
		t.Errorf("Counts as a read-only role = %v, %v; want 2 pending", counts, err)
	}
}

// TestChangesOnDeadRemoved: deleting a dead job (dlq purge, rm, purge
// --state dead) wakes the Changes channel of another Store, as every other
// change to the set of dead jobs does: a worker of another host keeps its
// dead/ in step on these wake-ups, and kept the purged job's file there.
func TestChangesOnDeadRemoved(t *testing.T) {
	dsn := pgtest.DSN(t)
	watcher, other := mustOpen(t, dsn), mustOpen(t, dsn)
	ctx := t.Context()
	one := 1
	kill := func(id string) {
		t.Helper()
		if _, err := other.Enqueue(ctx, claim.NewJob{ID: id, Command: "false", MaxRetries: &one}); err != nil {
			t.Fatal(err)
		}
		c := claim.Claimant{WorkerID: "w", Host: "testhost", PID: 1, Lease: 30 * time.Second, LogDir: t.TempDir()}
		_, r, err := other.Claim(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := other.FailForGood(ctx, r, nil, "failed"); err != nil || st != claim.Dead {
			t.Fatalf("FailForGood(%s) = %v, %v; want dead", id, st, err)
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		kill(id)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := watcher.Changes(cctx)
	if err != nil {
		t.Fatal(err)
	}
	drain := func() { // wake-ups of the listener's start, and of earlier writes
		for {
			select {
			case <-ch:
			case <-time.After(500 * time.Millisecond):
				return
			}
		}
	}
	drain()
	if err := other.Purge(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	awaitWake(t, ch, "a Purge of a dead job by another Store")
	drain()
	if err := other.Remove(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	awaitWake(t, ch, "a Remove of a dead job by another Store")
	drain()
	if ids, err := other.PurgeFinished(ctx, claim.Dead, time.Now().Add(time.Hour)); err != nil || len(ids) != 1 {
		t.Fatalf("PurgeFinished(dead) = %v, %v; want [c]", ids, err)
	}
	awaitWake(t, ch, "a PurgeFinished of dead jobs by another Store")
}

// TestOpenRefusesAURLWithoutDatabase: a URL that names no database (none
// in its path, no dbname= parameter, no $PGDATABASE) is refused before it
// connects, with how to name one, rather than left to libpq's default (a
// database named after the user) for the schema to be made there. One
// that names it any of those ways is taken (and here fails only to
// connect: nothing listens on port 1, or in the socket directory, which
// $PGHOST names for a URL without a host, so that no URL here reaches a
// server whatever Open makes of it).
func TestOpenRefusesAURLWithoutDatabase(t *testing.T) {
	t.Setenv("PGHOST", t.TempDir())
	t.Setenv("PGCONNECT_TIMEOUT", "5")
	t.Setenv("PGDATABASE", "")
	os.Unsetenv("PGDATABASE")
	t.Setenv("PGSERVICE", "")
	os.Unsetenv("PGSERVICE")
	for _, dsn := range []string{"postgres://", "postgresql://", "POSTGRES://", "postgres:///", "postgres://qu:S3cret@127.0.0.1:1",
		"postgres://127.0.0.1:1/?sslmode=disable"} {
		s, err := claim.Open(dsn)
		if err == nil {
			s.Close()
		}
		var le *claim.LocationError
		if !errors.As(err, &le) || !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), "names no database") ||
			!strings.Contains(le.Hint(), "postgres://HOST/DBNAME") || strings.Contains(err.Error(), "S3cret") {
			t.Errorf("Open(%q) = %v; want ErrInvalid saying it names no database, with a hint at postgres://HOST/DBNAME", dsn, err)
		}
	}
	named := []string{"postgres://127.0.0.1:1/qdb?connect_timeout=5", "postgres://127.0.0.1:1?dbname=qdb&connect_timeout=5",
		"postgres:///qdb"}
	check := func(dsn string) {
		t.Helper()
		s, err := claim.Open(dsn)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%q) = nil error; nothing should listen there", dsn)
		}
		if errors.Is(err, claim.ErrInvalid) {
			t.Errorf("Open(%q) = %v; want it to name its database, and fail only to connect", dsn, err)
		}
	}
	for _, dsn := range named {
		check(dsn)
	}
	t.Setenv("PGDATABASE", "qdb")
	check("postgres://127.0.0.1:1?connect_timeout=5")
}

// TestConnectionsSayTheyAreQueuectls: a store's connections name queuectl
// in pg_stat_activity, unless the URL names them otherwise, so that an
// operator can tell them from the rest of a server's sessions.
func TestConnectionsSayTheyAreQueuectls(t *testing.T) {
	dsn := pgtest.DSN(t)
	look, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer look.Close(context.Background())
	for _, tc := range []struct{ dsn, name string }{{dsn, "queuectl"}, {dsn + "&application_name=nightly", "nightly"}} {
		s := mustOpen(t, tc.dsn)
		if _, err := s.Enqueue(t.Context(), claim.NewJob{Command: "true"}); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := look.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND pid <> pg_backend_pid()`, tc.name).Scan(&n); err != nil || n == 0 {
			t.Errorf("%s: %d connections named %q (%v), want the store's", tc.dsn, n, tc.name, err)
		}
		s.Close()
	}
}

// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema in the server that QUEUECTL_TEST_POSTGRES names, dropped when the
// test ends, so that tests run in parallel and leave nothing behind.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/internal/testenv"
)

// Env names the variable that holds the test server's DSN.
const Env = "QUEUECTL_TEST_POSTGRES"

// Hint says how to run the PostgreSQL tests.
const Hint = "PostgreSQL tests skipped: set " + Env + "=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable to run them"

// Server returns the test server's DSN. When none is set it skips tb with
// Hint (and fails it under CI=true, where the suite must run), and says so
// once per `go test` run on the terminal, where `go test ./...` shows it
// even though it hides the output of packages that pass.
func Server(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		announceSkip()
		testenv.Missing(tb, "%s", Hint)
	}
	return dsn
}

// announceSkip writes Hint to the terminal once per `go test` command: its
// test binaries share a parent, the go command, whose pid names a marker
// file that only the first of them creates. Without a terminal the hint
// stays in each skipped test's output (-v). The marker holds the go
// command's mark, so that the first binary of a later command removes it
// (newMarker): each command's one file does not pile up.
func announceSkip() {
	if !newMarker() {
		return
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer tty.Close()
	fmt.Fprintf(tty, "\n*** %s ***\n\n", Hint)
}

// skipMarkerPrefix begins the name of announceSkip's markers, in the
// temporary directory: not clusterPrefix, so that a marker is never taken
// for a cluster's directory, nor a cluster's for a marker.
const skipMarkerPrefix = "queuectl-pgskip-"

// newMarker creates this `go test` command's marker, holding the go
// command's mark, and removes those of commands that have ended; it
// reports whether the marker is new: false when another test binary of the
// command made it first.
func newMarker() bool {
	f, err := os.OpenFile(skipMarker(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	f.WriteString(testenv.MarkOf(os.Getppid()))
	f.Close()
	sweepMarkers()
	return true
}

// sweepMarkers removes the markers of `go test` commands that have ended.
func sweepMarkers() {
	markers, _ := filepath.Glob(filepath.Join(os.TempDir(), skipMarkerPrefix+"*"))
	for _, m := range markers {
		if mark, err := os.ReadFile(m); err == nil && testenv.Gone(string(mark)) {
			os.Remove(m)
		}
	}
}

// skipMarker is the marker of this `go test` command (announceSkip).
func skipMarker() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("%s%d", skipMarkerPrefix, os.Getppid()))
}

// DSN creates an empty schema in the test server and returns a DSN whose
// connections use it (search_path). The schema is dropped, with all in it,
// when tb ends; close what uses it first (tb.Cleanup runs last-in first).
func DSN(tb testing.TB) string {
	tb.Helper()
	dsn, drop, err := NewSchema(Server(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := drop(); err != nil {
			tb.Error(err)
		}
	})
	return dsn
}

// NewSchema creates an empty schema in server and returns a DSN whose
// connections use it, and the function that drops it.
func NewSchema(server string) (dsn string, drop func() error, err error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %v", Env, err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "qtest_" + hex.EncodeToString(b[:])
	if err := run(server, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() error { return run(server, "DROP SCHEMA "+schema+" CASCADE") }, nil
}

// Exec runs one statement on the test server, as a superuser would.
func Exec(tb testing.TB, sql string) {
	tb.Helper()
	exec(tb, Server(tb), sql)
}

// ExecIn runs one statement in the schema of dsn (one DSN gave): what a
// release that wrote rows otherwise would have left there.
func ExecIn(tb testing.TB, dsn, sql string) {
	tb.Helper()
	exec(tb, dsn, sql)
}

func exec(tb testing.TB, dsn, sql string) {
	tb.Helper()
	if err := run(dsn, sql); err != nil {
		tb.Fatal(err)
	}
}

func run(dsn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to the test server (%s): %v", Env, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %v", sql, err)
	}
	return nil
}

// Fill adds n pending jobs running command to the queue that dsn's schema
// holds (migrated), runnable now, in one statement: a million take seconds,
// where enqueueing them in batches takes minutes. Their ids are fill-<x>-<i>
// with x new on every call. The statement also counts them (queue_counts)
// and analyzes the table, as autovacuum would after such a load, so that
// the planner knows its size.
func Fill(tb testing.TB, dsn string, n int, command string) {
	tb.Helper()
	var b [4]byte
	rand.Read(b[:])
	now := time.Now().UnixNano()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect to the test server (%s): %v", Env, err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `INSERT INTO jobs (id, command, state, max_retries, backoff_base, run_after, created_at, updated_at)
		SELECT $1 || g, $2, 'pending', 3, 2, $3, $3, $3 FROM generate_series(1, $4::bigint) AS g`,
		"fill-"+hex.EncodeToString(b[:])+"-", command, now, n)
	if err != nil {
		tb.Fatalf("fill %d jobs: %v", n, err)
	}
	if _, err := conn.Exec(ctx, "SELECT queuectl_count('default', 'pending', $1)", n); err != nil {
		tb.Fatalf("count %d jobs: %v", n, err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE jobs"); err != nil {
		tb.Fatalf("analyze jobs: %v", err)
	}
}

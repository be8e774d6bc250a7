package claim_test

import (
	"testing"

	"github.com/queuectl/queuectl/claim"
	_ "github.com/queuectl/queuectl/claim/postgres"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
	_ "github.com/queuectl/queuectl/claim/sqlite"
)

// The conformance harness: every Store test runs once per engine, each time
// on a fresh, empty database of its own, so that the engines are held to
// one contract. Tests of an engine's own mechanisms (PRAGMAs, LISTEN) live
// in the engine's folder.

// testEngine makes fresh databases of one engine for tests.
type testEngine struct {
	name string
	// create returns the location of a new, empty database that is removed
	// when tb ends, or skips tb when the engine cannot run here.
	create func(tb testing.TB) string
}

// testEngines lists every engine, SQLite first. PostgreSQL's tests run in
// a schema of their own on the server QUEUECTL_TEST_POSTGRES names, and
// skip (saying so) without it.
var testEngines = []testEngine{
	{claim.EngineSQLite, func(tb testing.TB) string { return tb.TempDir() + "/queue.db" }},
	{claim.EnginePostgres, pgtest.DSN},
}

// testDB is one test's database; each open returns another Store on it, as
// another process would have.
type testDB struct {
	engine   string
	location string
}

// forEachEngine runs f as a subtest per engine, each with a new database.
func forEachEngine(t *testing.T, f func(t *testing.T, db testDB)) {
	t.Helper()
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			f(t, testDB{engine: e.name, location: e.create(t)})
		})
	}
}

// ForEachEngine runs f as a subtest per engine, each with a fresh, empty
// store, closed when the subtest ends.
func ForEachEngine(t *testing.T, f func(t *testing.T, s *claim.Store)) {
	t.Helper()
	forEachEngine(t, func(t *testing.T, db testDB) { f(t, db.open(t)) })
}

// open opens another Store on db, closed when tb ends.
func (db testDB) open(tb testing.TB) *claim.Store {
	tb.Helper()
	return mustOpenPath(tb, db.location)
}

// openClocked opens a Store on db whose clock stands still at t0 until
// advanced.
func (db testDB) openClocked(tb testing.TB) (*claim.Store, *fakeClock) {
	tb.Helper()
	s := db.open(tb)
	clk := &fakeClock{now: t0}
	s.Now = clk.Now
	return s, clk
}

// mustOpenPath opens (another) Store on location: its own connections.
func mustOpenPath(tb testing.TB, location string) *claim.Store {
	tb.Helper()
	s, err := claim.Open(location)
	if err != nil {
		tb.Fatalf("Open(%q) = %v", location, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// benchEngines runs f as a sub-benchmark per engine, each with a new
// database.
func benchEngines(b *testing.B, f func(b *testing.B, db testDB)) {
	for _, e := range testEngines {
		b.Run(e.name, func(b *testing.B) {
			f(b, testDB{engine: e.name, location: e.create(b)})
		})
	}
}

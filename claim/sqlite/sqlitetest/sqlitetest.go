// Package sqlitetest is for tests that act on a store's SQLite file from
// outside the store, as another process would.
package sqlitetest

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// WriteLock takes the write lock of the SQLite database at path, as a long
// write of another process holds it, waiting up to 30s for it. The
// returned function lets it go; the test's end does too.
func WriteLock(tb testing.TB, path string) (release func()) {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		tb.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		db.Close()
		tb.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		db.Close()
		tb.Fatalf("take the write lock of %s: %v", path, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
				tb.Errorf("let go of the write lock of %s: %v", path, err)
			}
			conn.Close()
			db.Close()
		})
	}
	tb.Cleanup(release)
	return release
}

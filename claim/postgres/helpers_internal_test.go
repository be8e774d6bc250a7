package postgres

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// openStore opens the store at dsn, closed when t ends.
func openStore(t *testing.T, dsn string) *claim.Store {
	t.Helper()
	s, err := claim.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// holdRows runs lock (a SELECT … FOR UPDATE) in a transaction of a
// connection of its own, outside any store, and returns both: the rows
// stay locked until the transaction ends (rolled back when t ends, if
// not before); the connection is closed when t ends.
func holdRows(t *testing.T, dsn, lock string) (*pgx.Conn, pgx.Tx) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, lock); err != nil {
		t.Fatal(err)
	}
	return conn, tx
}

// sslmode=require against a server with ssl = off: pgconn says so in these
// words only (no type of its own), and the hint says what to change.
func TestTLSRefusedHint(t *testing.T) {
	err := classify(fmt.Errorf("failed to connect to `user=q database=q`: 127.0.0.1:5432 (127.0.0.1): tls error: %w",
		errors.New("server refused TLS connection")))
	var h interface{ Hint() string }
	if !errors.Is(err, claim.ErrUnavailable) || !errors.As(err, &h) || !strings.Contains(h.Hint(), "sslmode=disable") {
		t.Errorf("classify(refused TLS) = %v; want unavailable, with a hint to set sslmode=disable", err)
	}
}

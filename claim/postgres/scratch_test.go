package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// TestScratch: a scratch database holds a store of its own, away from the
// server's database, and is gone once dropped, connections and all.
func TestScratch(t *testing.T) {
	server := pgtest.Server(t)
	scratch, drop, err := claim.Scratch(t.Context(), server)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(scratch)
	name := strings.TrimPrefix(u.Path, "/")
	if !strings.HasPrefix(name, "queuectl_scratch_") {
		t.Fatalf("scratch database %q, want queuectl_scratch_…", name)
	}
	s, err := claim.Open(scratch)
	if err != nil {
		drop(context.Background())
		t.Fatal(err)
	}
	if _, err := s.Enqueue(t.Context(), claim.NewJob{ID: "a", Command: "true"}); err != nil {
		t.Error(err)
	}
	// Dropped with the store still open: its connections end with it.
	if err := drop(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var n int
	query(t, server, "SELECT count(*) FROM pg_database WHERE datname = '"+name+"'", &n)
	if n != 0 {
		t.Errorf("database %s is still there after drop", name)
	}
}

// TestScratchWithoutRight: a user who may not create databases gets an
// error that says so, and how to fix it.
func TestScratchWithoutRight(t *testing.T) {
	role, u := newRole(t, pgtest.Server(t), "qtest_nocreate_", "NOCREATEDB")
	_, _, err := claim.Scratch(t.Context(), u.String())
	var h interface{ Hint() string }
	if err == nil || !strings.Contains(err.Error(), "may not create databases") || !errors.As(err, &h) ||
		!strings.Contains(h.Hint(), "CREATEDB") {
		t.Fatalf("Scratch as %s = %v, want an error that the user may not create databases, with a hint", role, err)
	}
}

// TestScratchOfAFile: a SQLite path names no server.
func TestScratchOfAFile(t *testing.T) {
	if _, _, err := claim.Scratch(t.Context(), t.TempDir()+"/queue.db"); !errors.Is(err, claim.ErrInvalid) {
		t.Errorf("Scratch(a file) = %v, want ErrInvalid", err)
	}
}

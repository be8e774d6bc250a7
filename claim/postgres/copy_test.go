package postgres_test

import (
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// A store opened read-only, as the source of a copy, refuses every write,
// and a database without a queuectl schema instead of making one.
func TestOpenReadOnly(t *testing.T) {
	dsn := pgtest.DSN(t)
	if s, err := claim.OpenReadOnly(dsn); err == nil || !strings.Contains(err.Error(), "holds no queuectl store") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("OpenReadOnly(empty database) = %v, want it refused", err)
	}
	var tables int
	query(t, dsn, "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()", &tables)
	if tables != 0 {
		t.Errorf("OpenReadOnly(empty database) made %d tables", tables)
	}

	if _, err := mustOpen(t, dsn).Enqueue(t.Context(), claim.NewJob{ID: "a", Command: "true"}); err != nil {
		t.Fatal(err)
	}
	s, err := claim.OpenReadOnly(dsn)
	if err != nil {
		t.Fatalf("OpenReadOnly = %v", err)
	}
	defer s.Close()
	if _, err := s.Get(t.Context(), "a"); err != nil {
		t.Errorf("Get(a) on the read-only store = %v", err)
	}
	if _, err := s.Enqueue(t.Context(), claim.NewJob{ID: "b", Command: "true"}); err == nil || !strings.Contains(err.Error(), "read-only transaction") {
		t.Errorf("Enqueue on the read-only store = %v, want a read-only error", err)
	}
}

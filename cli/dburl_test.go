package cli

import (
	"strings"
	"testing"
)

// TestPostgresSchemeInAnyCase: a URL's scheme is case-insensitive, so a
// worker given PostgreSQL://… runs the jobs of the store postgres://…
// names (testdata/script/dburl.txtar has the URLs refused).
func TestPostgresSchemeInAnyCase(t *testing.T) {
	h := newPostgresHome(t)
	h.must("enqueue", "--id", "one", "--command", "true")
	upper := *h
	upper.db = "PostgreSQL" + strings.TrimPrefix(h.db, "postgres")
	upper.must("worker", "start", "--drain", "--no-spool")
	if j := h.show("one"); j.State != "completed" {
		t.Errorf("job one is %s after a worker on %s drained, want completed", j.State, upper.db)
	}
}

package cli

import (
	"net/url"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim/postgres/pgtest"
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

// TestWorkerNamesTheURLAsGiven: a worker's messages name its store by the
// URL the user gave, password hidden, without the pool size the worker
// sets for itself (pool_max_conns, which the user never typed).
func TestWorkerNamesTheURLAsGiven(t *testing.T) {
	server := pgtest.Server(t)
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "sekrit")
	u.Path = "/queuectl_no_such_db"
	u.RawQuery = "sslmode=disable&application_name=qworker"
	h := newHome(t)
	h.db = u.String()
	_, errText, code := h.run("worker", "start", "--count", "4", "--no-spool")
	want := "postgres://" + u.User.Username() + ":xxxxx@" + u.Host + "/queuectl_no_such_db?sslmode=disable&application_name=qworker:"
	if code != 1 || !strings.Contains(errText, want) || strings.Contains(errText, "pool_max_conns") || strings.Contains(errText, "sekrit") {
		t.Errorf("worker start on a database that does not exist: exit %d, stderr\n%s\nwant exit 1 naming %s", code, errText, want)
	}
}

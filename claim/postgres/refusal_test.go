package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// refusingServer is a store in a cluster of the test's own, whose
// settings a test changes for every database in it, and an admin
// connection to change them.
type refusingServer struct {
	t     *testing.T
	dsn   string
	store *claim.Store
	admin *pgx.Conn
}

func newRefusingServer(t *testing.T) *refusingServer {
	cluster := pgtest.NewCluster(t)
	dsn, drop, err := pgtest.NewSchema(cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	admin, err := pgx.Connect(t.Context(), cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	return &refusingServer{t: t, dsn: dsn, store: mustOpen(t, dsn), admin: admin}
}

// set runs sql (ALTER SYSTEM …) and reloads the server's configuration.
func (r *refusingServer) set(sql string) {
	r.t.Helper()
	for _, q := range []string{sql, "SELECT pg_reload_conf()"} {
		if _, err := r.admin.Exec(r.t.Context(), q); err != nil {
			r.t.Fatalf("%s: %v", q, err)
		}
	}
}

// refused enqueues until the server refuses: a reload reaches the store's
// connections before their next statement, but not at once, and a write
// that still went through is no answer yet. Nor is one that began before
// its connection took the reload, and so waits for the lock a test holds
// with no statement_timeout: each is given a few seconds, then tried again.
func (r *refusingServer) refused(what string) error {
	r.t.Helper()
	for i := 0; i < 1000; i++ {
		ctx, cancel := context.WithTimeout(r.t.Context(), 5*time.Second)
		_, err := r.store.Enqueue(ctx, claim.NewJob{Command: "true"})
		late := ctx.Err() != nil && r.t.Context().Err() == nil
		cancel()
		if late {
			continue
		}
		if err != nil {
			return err
		}
	}
	r.t.Fatalf("every Enqueue went through with %s", what)
	return nil
}

// TestStatementTimeoutHint: a statement that the server cancels at its
// statement_timeout, here waiting for a lock another session holds on the
// jobs table, is said with that cause and its fix, not as a server to
// check is running (which it is). It is an outage (ErrUnavailable), which
// a worker rides out: the lock goes, or the setting changes.
func TestStatementTimeoutHint(t *testing.T) {
	r := newRefusingServer(t)
	lock, err := pgx.Connect(t.Context(), r.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close(context.Background())
	tx, err := lock.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), "LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	r.set("ALTER SYSTEM SET statement_timeout = '50ms'")
	err = r.refused("statement_timeout = 50ms and the jobs table locked")
	if hint := hintOf(err); !errors.Is(err, claim.ErrUnavailable) || !strings.Contains(hint, "statement_timeout") ||
		!strings.Contains(hint, "lock") || strings.Contains(hint, "running and reachable") {
		t.Errorf("Enqueue past statement_timeout = %v (hint %q); want ErrUnavailable, with a hint at statement_timeout and locks", err, hint)
	}
}

package handoff

import (
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
	_ "github.com/queuectl/queuectl/claim/postgres" // the PostgreSQL engine, for claim.Open
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// socketStore is the cluster's store, which names itself by its URL: the
// cluster's is of a unix socket, with no host, which claim.SameStore
// takes for no store's.
type socketStore struct{ *claim.Store }

func (socketStore) Names(string) bool { return true }

// TestEnqueuesDuringOutageSaidOnce: while the store's server is down,
// every client's enqueue fails (and the client says so itself), but the
// worker's log says it once, not a line per client; after the server is
// back and a commit went through, the next outage is said again. The
// server is a cluster of the test's own, stopped and started.
func TestEnqueuesDuringOutageSaidOnce(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	dsn, drop, err := pgtest.NewSchema(cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	s, err := claim.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	path, logged := serve(t, socketStore{s})
	enqueueFails := func(n int) {
		t.Helper()
		for i := range n {
			if _, err := Enqueue(path, dsn, claim.NewJob{Command: "true"}); err == nil {
				t.Fatalf("enqueue %d with the server down = nil error", i)
			}
		}
	}
	said := func() int { return strings.Count(logged(), "enqueue socket: store") }

	cluster.Crash()
	enqueueFails(5)
	if n := said(); n != 1 {
		t.Errorf("5 enqueues while the server was down: said %d times, want once:\n%s", n, logged())
	}
	cluster.Start()
	if _, err := Enqueue(path, dsn, claim.NewJob{ID: "back", Command: "true"}); err != nil {
		// A pooled connection the crash cut fails once more.
		if _, err := Enqueue(path, dsn, claim.NewJob{ID: "back", Command: "true"}); err != nil {
			t.Fatalf("enqueue once the server was back: %v", err)
		}
	}
	cluster.Crash()
	enqueueFails(3)
	if n := said(); n != 2 {
		t.Errorf("a second outage: said %d times in all, want twice:\n%s", n, logged())
	}
}

package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// TestWakeUpsLostAreSaid: a process whose LISTEN connection cannot be
// made (its role's CONNECTION LIMIT reached by its pool) is told so by
// WakeUpsLost, with the server's refusal and since when, while its pool
// works; once the connection can be made, they are heard again.
func TestWakeUpsLostAreSaid(t *testing.T) {
	role, u := newRole(t, pgtest.DSN(t), "qtest_listen_", "CONNECTION LIMIT 1")
	schema := u.Query().Get("search_path")
	pgtest.Exec(t, "GRANT ALL ON SCHEMA "+schema+" TO "+role)
	q := u.Query()
	q.Set("pool_max_conns", "1")
	u.RawQuery = q.Encode()
	s, err := claim.Open(u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Workers(t.Context()); err != nil { // the pool's one connection, held
		t.Fatal(err)
	}
	if _, err := s.Changes(t.Context()); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	var since time.Time
	waitUntil(t, "the wake-ups to be said lost", func() bool {
		since, err = s.WakeUpsLost()
		return err != nil
	})
	if !strings.Contains(err.Error(), "too many connections") || since.Before(began.Add(-time.Second)) || since.After(time.Now()) {
		t.Errorf("WakeUpsLost = %v, %v; want the server's refusal, since the listener began", since, err)
	}
	if _, err := s.Workers(t.Context()); err != nil {
		t.Errorf("the store, its wake-ups lost: %v; want it to answer", err)
	}
	pgtest.Exec(t, "ALTER ROLE "+role+" CONNECTION LIMIT 2")
	waitUntil(t, "the wake-ups to be heard again", func() bool {
		_, err = s.WakeUpsLost()
		return err == nil
	})
}

// waitUntil polls cond until it holds, for 30 s at most.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

package postgres

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// TestRecoverLockTimeout: a Recover that finds the job's row locked
// elsewhere (an open transaction) gives up with the server's
// lock_not_available instead of holding the worker's connection, perhaps
// its pool's only one, until the lock goes.
func TestRecoverLockTimeout(t *testing.T) {
	ctx := t.Context()
	defer func(was string) { recoverLockTimeout = was }(recoverLockTimeout)
	recoverLockTimeout = "SET LOCAL lock_timeout = '200ms'"
	dsn := pgtest.DSN(t)
	s := openStore(t, dsn)
	if _, err := s.EnqueueAll(ctx, []claim.NewJob{{ID: "a", Command: "true"}}); err != nil {
		t.Fatal(err)
	}
	c := claim.Claimant{WorkerID: "w", Host: "h", PID: os.Getpid(), Lease: time.Minute, LogDir: t.TempDir()}
	if _, _, err := s.Claim(ctx, c); err != nil {
		t.Fatal(err)
	}
	holdRows(t, dsn, "SELECT 1 FROM jobs WHERE id = 'a' FOR UPDATE")

	e, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// The test's own bound: without the lock timeout, Recover waits for it.
	bounded, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err = e.Recover(bounded, claim.RecoverParams{JobID: "a", Attempt: 1, MaxLost: 3, Now: time.Now()})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "55P03" {
		t.Fatalf("Recover of a row locked elsewhere = %v, want lock_not_available (55P03)", err)
	}
}

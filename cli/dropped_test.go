package cli

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/queuectl/queuectl/claim"
)

// TestStoreDroppedUnderWorker: the queue's schema is dropped and made anew,
// empty, while a worker runs a job (as a database dropped and created
// again would be). The worker says that the queue's tables are gone, with
// what to do, lets its running job end and exits 1, instead of a line a
// second from each of its loops for as long as it lives. The server is a
// cluster of the test's own.
func TestStoreDroppedUnderWorker(t *testing.T) {
	t.Parallel() // it mostly waits (a server of its own): see TestMain
	_, dsn, admin, h, dir := faultSetup(t)
	admin.enqueueOutageJob(dir, "held")
	w := h.start("worker", "start", "--count", "2", "--no-spool")
	waitFor(t, time.Minute, "job held to start", func() bool { return pidIn(filepath.Join(dir, "held.pid")) > 0 })

	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var schema string
	if err := conn.QueryRow(t.Context(), "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	name := pgx.Identifier{schema}.Sanitize()
	// The worker's writes lock the same tables in their own order: the
	// server may end the DROP as a deadlock's victim, and it goes again.
	waitFor(t, time.Minute, "the schema to be dropped", func() bool {
		_, err := conn.Exec(t.Context(), "DROP SCHEMA "+name+" CASCADE")
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "40P01" { // deadlock_detected
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		return true
	})
	if _, err := conn.Exec(t.Context(), "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the worker to say the queue's tables are gone", func() bool {
		if n := strings.Count(w.stderr.String(), "does not exist"); n > 20 {
			t.Fatalf("the worker said %d lines of tables that do not exist, and goes on:\n%s", n, w.stderr)
		}
		return strings.Contains(w.stderr.String(), claim.ErrDropped.Error())
	})
	openGate(t, dir)
	if code := w.exit(t, time.Minute); code != exitFailure {
		t.Errorf("worker exit %d, want %d\nstderr: %s", code, exitFailure, w.stderr)
	}
	text := w.stderr.String()
	if !strings.Contains(text, "hint: the jobs went with the tables") {
		t.Errorf("the worker's last words have no hint at a backup:\n%s", text)
	}
	// Said once by each part of the worker that met it (which of the dead
	// files' sync, the lease renewal, the job's start and end records meet
	// it depends on when each looks), and by the worker's end: never again
	// by a loop that tries once more.
	said := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, claim.ErrDropped.Error()) {
			continue
		}
		if said[line] {
			t.Errorf("the worker said %q more than once:\n%s", line, text)
		}
		said[line] = true
	}
	if len(said) > 6 {
		t.Errorf("the worker said the tables were gone %d times, want at most 6 (once per part, and its end):\n%s", len(said), text)
	}
}

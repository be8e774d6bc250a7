package cli

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// TestReadOnlyServer: the server stops taking writes while a worker runs a
// job (a primary demoted to a standby, or default_transaction_read_only
// turned on), and takes them again later. The worker says so once, not
// once per refused claim, nor again each time a read goes through (the
// server still answers reads), keeps its running job and records it once
// writes are back, and claims again; enqueue says what is wrong and how
// to fix it. The server is a cluster of the test's own: the setting is the
// server's.
func TestReadOnlyServer(t *testing.T) {
	t.Parallel() // it mostly waits (a server of its own, an outage): see TestMain
	cluster, _, admin, h, dir := faultSetup(t)
	admin.enqueueOutageJob(dir, "long")
	w := h.start("worker", "start", "--count", "2", "--no-spool")
	waitFor(t, time.Minute, "job long to start", func() bool { return pidIn(filepath.Join(dir, "long.pid")) > 0 })

	// serverSays runs one statement on a connection of its own and scans
	// its row: the statistics it reads are the server's as of now.
	serverSays := func(sql string, dest ...any) {
		t.Helper()
		conn, err := pgx.Connect(t.Context(), cluster.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(t.Context(), sql).Scan(dest...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	readOnly := func(on bool) {
		t.Helper()
		set := "ALTER SYSTEM RESET default_transaction_read_only"
		if on {
			set = "ALTER SYSTEM SET default_transaction_read_only = on"
		}
		conn, err := pgx.Connect(t.Context(), cluster.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		for _, q := range []string{set, "SELECT pg_reload_conf()"} {
			if _, err := conn.Exec(t.Context(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	rollbacks := func() int64 {
		var n int64
		serverSays("SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()", &n)
		return n
	}

	readOnly(true)
	waitFor(t, time.Minute, "the worker to say the store takes no writes", func() bool {
		return strings.Contains(w.stderr.String(), "store unreachable") && strings.Contains(w.stderr.String(), claim.ErrReadOnly.Error())
	})
	said := strings.Count(w.stderr.String(), "\n")
	// The worker's claims, renewals and the reaper's reads go on at their
	// own pace meanwhile: a dozen refused writes are a dozen chances to
	// say it again.
	from := rollbacks()
	waitFor(t, time.Minute, "a dozen writes refused", func() bool { return rollbacks()-from >= 12 })
	if n := strings.Count(w.stderr.String(), "\n") - said; n > 0 {
		t.Errorf("the worker said %d lines more while the server took no writes, want none:\n%s", n, w.stderr)
	}
	_, stderr, code := admin.run("enqueue", "--command", "true")
	if code != exitFailure || !strings.Contains(stderr, "hint: the server takes no writes") {
		t.Errorf("enqueue on a read-only server: exit %d, stderr %q; want %d, with a hint at the primary", code, stderr, exitFailure)
	}

	readOnly(false)
	openGate(t, dir)
	admin.must("wait", "long", "--timeout", "60s")
	admin.enqueueOutageJob(dir, "after")
	admin.must("wait", "after", "--timeout", "60s")
	for _, id := range []string{"long", "after"} {
		if runs := runsOf(t, admin, id); len(runs) != 1 || runs[0].Outcome != claim.OutcomeCompleted {
			t.Errorf("job %s: runs %+v, want one, completed", id, runs)
		}
	}
	// The return is said once the store has answered for a while
	// (run.Reach.Settle); a stumble before then is the same outage.
	waitFor(t, time.Minute, "the worker to say the store is back", func() bool {
		return strings.Contains(w.stderr.String(), "store reachable again")
	})
	text := w.stderr.String()
	for _, want := range []string{"store unreachable", "store reachable again"} {
		if n := strings.Count(text, want); n != 1 {
			t.Errorf("the worker said %q %d times, want once\nstderr: %s", want, n, text)
		}
	}
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

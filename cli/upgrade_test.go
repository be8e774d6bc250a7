package cli

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" driver
)

// TestWorkerStopsOnceANewerQueuectlMigrates: while a worker runs a job, a
// newer queuectl (on another host, say) migrates the store. The worker,
// which would not know what the newer schema's writes must keep, finds out
// at its next lease renewal: it claims nothing more, lets its running job
// end and records it, and exits 1 with the newer-schema error and its hint.
func TestWorkerStopsOnceANewerQueuectlMigrates(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			h := newHome(t)
			if engine == "postgres" {
				h = newPostgresHome(t)
			}
			h.must("config", "set", "heartbeat-interval", "1s")
			g := newGate(t)
			h.must("enqueue", "--id", "running", "--command", g.command())
			// runnable once running ends, after the worker stopped claiming
			h.must("enqueue", "--id", "later", "--after", "running", "--command", "true")
			w := h.start("worker", "start", "--count", "2", "--no-spool")
			g.waitStarted(t)

			bumpSchema(t, h, engine, 1)
			waitFor(t, time.Minute, "the worker to find the newer schema", func() bool {
				return strings.Contains(w.stderr.String(), "newer than this queuectl knows")
			})
			g.release(t)
			if code := w.exit(t, time.Minute); code != 1 {
				t.Errorf("worker exit %d, want 1\nstderr: %s", code, w.stderr)
			}
			text := w.stderr.String()
			for _, want := range []string{"stopping once the 1 running job(s) end", "hint: a newer queuectl has migrated this store", "job running completed"} {
				if !strings.Contains(text, want) {
					t.Errorf("worker stderr lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(text, "job later started") {
				t.Errorf("the worker claimed a job after it found the newer schema:\n%s", text)
			}
			bumpSchema(t, h, engine, -1) // back to this build's, to read the jobs
			for id, want := range map[string]string{"running": "completed", "later": "pending"} {
				if got := h.must("show", "--json", id); !strings.Contains(got, `"state": "`+want+`"`) {
					t.Errorf("job %s after the worker stopped: %s, want %s", id, got, want)
				}
			}
		})
	}
}

// bumpSchema moves the store's schema version by delta, as a migration
// of another queuectl would (or undoes that).
func bumpSchema(t *testing.T, h *qhome, engine string, delta int) {
	t.Helper()
	if engine == "postgres" {
		conn, err := pgx.Connect(t.Context(), strings.Replace(h.db, "&pool_max_conns=4", "", 1)) // a pool's setting
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(t.Context(), "UPDATE queuectl_schema SET version = version + $1", delta); err != nil {
			t.Fatal(err)
		}
		return
	}
	db, err := sql.Open("sqlite", "file:"+h.location()+"?_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v+delta)); err != nil {
		t.Fatal(err)
	}
}

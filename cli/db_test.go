package cli

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
	"github.com/queuectl/queuectl/report"
)

// TestDBCopy moves a SQLite home up to PostgreSQL with the real binary:
// refused while a worker runs, then copied, after which every command
// shows the same on both; refused again once the target holds the copy;
// and the SQLite file is the same as before.
func TestDBCopy(t *testing.T) {
	target, second := pgtest.DSN(t), pgtest.DSN(t)
	h := newHome(t)
	h.must("config", "set", "max-retries", "2")
	h.must("queue", "set", "heavy", "--max-running", "1")
	h.must("pause", "--queue", "frozen")
	h.must("schedule", "add", "tick", "--cron", "@hourly", "--command", "date")
	h.must("enqueue", "--id", "ok", "--command", "echo hello; echo oops >&2")
	h.must("enqueue", "--id", "bad", "--max-retries", "1", "--command", "echo nope; exit 3")
	h.must("enqueue", "--id", "then", "--command", "true", "--queue", "heavy")
	h.must("enqueue", "--id", "cold", "--command", "true", "--queue", "frozen")
	h.must("worker", "start", "--drain", "--no-spool", "--quiet")
	h.must("enqueue", `{"id": "after", "command": "true", "after": ["cold"]}`)

	w := h.start("worker", "start", "--no-spool", "--quiet")
	waitFor(t, 30*time.Second, "the worker to register", func() bool {
		return strings.Contains(h.must("status"), "workers: 1")
	})
	out, errText, code := h.run("db", "copy", "--to", target)
	if code != 1 || out != "" || !regexp.MustCompile(`(?m)^queuectl: error: 1 worker\(s\) still run on .*queue\.db \(pid \d+ on .*\): what they do during a copy would not be copied\nqueuectl: hint: stop them first: queuectl worker stop --wait`).MatchString(errText) {
		t.Fatalf("db copy beside a worker: exit %d, stdout %q, stderr %q; want exit 1 and why", code, out, errText)
	}
	h.must("worker", "stop", "--wait")
	w.exit(t, 30*time.Second)

	views := []string{"list --json", "show --json ok", "show --json bad", "show --json after", "logs ok",
		"logs ok --stderr", "logs bad", "dlq list --json", "queue list --json", "schedule list --json",
		"config list --json", "status --json"}
	before := map[string]string{}
	for _, v := range views {
		before[v] = h.must(strings.Fields(v)...)
	}
	sum := sha256.Sum256([]byte(readFile(t, filepath.Join(h.dir, "queue.db"))))

	out = h.must("db", "copy", "--to", target)
	if !regexp.MustCompile(`^Copied 5 jobs, 3 runs, 1 dependency, 1 schedule, 1 queue limit, 1 paused queue, 1 setting from .*queue\.db to postgres://.* in \d`).MatchString(out) {
		t.Errorf("db copy printed %q", out)
	}
	if sha256.Sum256([]byte(readFile(t, filepath.Join(h.dir, "queue.db")))) != sum {
		t.Errorf("db copy changed the SQLite file it copied from")
	}
	for _, v := range views {
		got := h.must(append([]string{"--db", target}, strings.Fields(v)...)...)
		if v == "status --json" {
			got, before[v] = withoutTimes(got), withoutTimes(before[v])
		}
		if got != before[v] {
			t.Errorf("%s after the copy:\n%s\nbefore, on SQLite:\n%s", v, got, before[v])
		}
	}

	out, errText, code = h.run("db", "copy", "--to", target)
	want := "queuectl: error: copy " + filepath.Join(h.dir, "queue.db") + " to " + target +
		": the target is not empty: it holds 5 jobs, 3 runs, 1 dependency, 1 schedule, 1 queue limit, 1 paused queue, config max-retries=2; nothing was copied\n" +
		"queuectl: hint: copy into a new, empty database (createdb NAME), or a new schema (CREATE SCHEMA NAME, then add &search_path=NAME to the URL)\n"
	if code != 1 || out != "" || errText != want {
		t.Errorf("db copy to the copy: exit %d, stdout %q, stderr\n%s\nwant exit 1, stderr\n%s", code, out, errText, want)
	}

	var st report.CopyStats
	if err := json.Unmarshal([]byte(h.must("db", "copy", "--json", "--to", second)), &st); err != nil {
		t.Fatal(err)
	}
	if st.Jobs != 5 || st.Runs != 3 || st.Dependencies != 1 || st.Schedules != 1 || st.Settings != 1 || st.To != second {
		t.Errorf("db copy --json = %+v", st)
	}

	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"db", "copy"}, 2, "queuectl: error: usage: name the database to copy into with --to\nqueuectl: hint: queuectl db copy --to postgres://USER@HOST/DATABASE\n"},
		{[]string{"db", "copy", "--to", filepath.Join(h.dir, "queue.db")}, 2, "queuectl: error: usage: --to names the store copied from (" + filepath.Join(h.dir, "queue.db") + ")\nqueuectl: hint: copy into another database: --to postgres://USER@HOST/DATABASE\n"},
		{[]string{"--home", t.TempDir(), "db", "copy", "--to", second}, 1, "no store to copy at "},
	} {
		out, errText, code := h.run(c.args...)
		if code != c.code || out != "" || !strings.Contains(errText, c.err) {
			t.Errorf("queuectl %v: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", c.args, code, out, errText, c.code, c.err)
		}
	}
}

// withoutTimes drops the fields of status that are ages, read at each run.
func withoutTimes(s string) string {
	return regexp.MustCompile(`(?m)^.*"(started_at|heartbeat_at|spool_unsafe)".*$`).ReplaceAllString(s, "")
}

// TestDBCopyLeftProcessing: a job whose worker was killed mid-run is
// copied as it is, processing, and the first worker on the new store
// recovers it as a lost run and runs it again.
func TestDBCopyLeftProcessing(t *testing.T) {
	target := pgtest.DSN(t)
	h := newHome(t)
	marker := filepath.Join(t.TempDir(), "ran")
	h.must("enqueue", "--id", "long", "--env", "M="+marker,
		"--command", `if [ -e "$M" ]; then echo again; else touch "$M"; exec sleep 600; fi`)
	h.killMidJob(marker, "--no-spool", "--quiet")

	h.must("db", "copy", "--to", target)
	h.db = target
	if v := h.show("long"); v.State != "processing" || len(v.Runs) != 1 {
		t.Fatalf("copied job = %+v, want processing with its one run", v)
	}
	h.start("worker", "start", "--no-spool", "--quiet")
	waitFor(t, 60*time.Second, "the job to be recovered and run again", func() bool {
		return h.show("long").State == "completed"
	})
	v := h.show("long")
	if len(v.Runs) != 2 || v.Runs[0].Outcome != "lost" || v.Runs[1].Outcome != "completed" {
		t.Errorf("runs after the copy = %+v, want lost, then completed", v.Runs)
	}
	if out := h.must("logs", "long", "--attempt", "2"); out != "again\n" {
		t.Errorf("logs of the run on the new store = %q, want %q", out, "again\n")
	}
}

// TestDBCopyInterrupted stops a copy with Ctrl-C once it is under way: it
// exits 130 saying that nothing was copied, the target holds nothing, and
// the copy run again goes through.
func TestDBCopyInterrupted(t *testing.T) {
	target := pgtest.DSN(t)
	h := newHome(t)
	var jobs strings.Builder
	n := 4 * claim.CopyProgressRows
	for i := range n {
		fmt.Fprintf(&jobs, "{\"id\": \"j%d\", \"command\": \"true\"}\n", i)
	}
	enqueue := h.command("enqueue", "-q", "-")
	enqueue.Stdin = strings.NewReader(jobs.String())
	if out, err := enqueue.CombinedOutput(); err != nil {
		t.Fatalf("enqueue -: %v\n%.500s", err, out)
	}

	p := h.start("db", "copy", "--to", target)
	waitFor(t, 60*time.Second, "the copy's first progress line", func() bool {
		return strings.Contains(p.stderr.String(), "rows so far") || ended(p)
	})
	p.signal(t, syscall.SIGINT)
	if code := p.exit(t, 60*time.Second); code != 130 || strings.Contains(p.stderr.String(), "context canceled") ||
		!strings.Contains(p.stderr.String(), "queuectl: interrupted: nothing was copied, postgres://") {
		t.Fatalf("db copy interrupted: exit %d, stderr %q; want exit 130 and that nothing was copied", code, p.stderr)
	}
	if out := h.must("--db", target, "list", "--json", "--limit", "1"); out != "[]\n" {
		t.Fatalf("after an interrupted copy the target lists %.200s, want []", out)
	}
	want := fmt.Sprintf("Copied %d jobs, ", n)
	if out := h.must("db", "copy", "--to", target); !strings.HasPrefix(out, want) {
		t.Fatalf("db copy again printed %q, want %q…", out, want)
	}
}

// TestDBCopyTargetRefusedNamesTo: a copy whose --to names a database that
// does not exist, or a user the server refuses, fails before copying, with
// a hint at --to, the URL at fault, not at --db (or $QUEUECTL_DB), which
// named the store copied from, or nothing.
func TestDBCopyTargetRefusedNamesTo(t *testing.T) {
	server, err := url.Parse(pgtest.Server(t))
	if err != nil {
		t.Fatal(err)
	}
	h := newHome(t)
	h.must("enqueue", "--id", "a", "--command", "true")
	noDatabase, noUser := *server, *server
	noDatabase.Path = fmt.Sprintf("/queuectl_no_such_db_%d", os.Getpid())
	noUser.User = url.User(fmt.Sprintf("queuectl_no_such_role_%d", os.Getpid()))
	noUser.Path = noDatabase.Path // the server refuses the role first
	for _, c := range []struct {
		to   string
		hint string
	}{
		{noDatabase.String(), "queuectl: hint: create the database first (createdb, or CREATE DATABASE), or name another in --to\n"},
		{noUser.String(), "queuectl: hint: the server refused the user: check the user and password in --to (or ~/.pgpass, or the file PGPASSFILE names, where the URL has none), and the server's pg_hba.conf\n"},
	} {
		out, errText, code := h.run("db", "copy", "--to", c.to)
		if code != 1 || out != "" || !strings.HasSuffix(errText, c.hint) {
			t.Errorf("db copy --to %s: exit %d, stdout %q, stderr\n%s\nwant exit 1, ending\n%s", c.to, code, out, errText, c.hint)
		}
	}
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/urfave/cli/v2"

	"github.com/queuectl/queuectl/claim/postgres/pgtest"
	"github.com/queuectl/queuectl/internal/testenv"
)

// Tests of the command surface through the real binary: every command's
// help and flag errors, wait, logs -f, JSON output, and signals. Exit codes
// without a running process: testdata/script/exitcodes.txtar.

// commandPaths lists every command of the app by its words: "dlq retry".
func commandPaths(cmds []*cli.Command, prefix []string) [][]string {
	var out [][]string
	for _, c := range cmds {
		path := append(append([]string(nil), prefix...), c.Name)
		out = append(out, path)
		out = append(out, commandPaths(c.Subcommands, path)...)
	}
	return out
}

func TestHelpOfEveryCommand(t *testing.T) {
	h := newHome(t)
	for _, path := range commandPaths(newApp(context.Background()).Commands, nil) {
		name := "queuectl " + strings.Join(path, " ")
		out, errText, code := h.run(append(path, "--help")...)
		if code != 0 || errText != "" {
			t.Errorf("%s --help: exit %d, stderr %q; want 0 and nothing", name, code, errText)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, "(default: ") > 1 || strings.Contains(line, "(default: false)") {
				t.Errorf("%s --help shows a doubled or empty default: %q", name, line)
			}
		}
		example := regexp.MustCompile(`(?m)^\s*Example[^:]*: .*` + regexp.QuoteMeta(name) + `\b`)
		if !example.MatchString(out) {
			t.Errorf("%s --help has no example line using %q:\n%s", name, name, out)
		}
	}
}

func TestBadFlagOfEveryCommand(t *testing.T) {
	h := newHome(t)
	for _, path := range commandPaths(newApp(context.Background()).Commands, nil) {
		name := "queuectl " + strings.Join(path, " ")
		out, errText, code := h.run(append(path, "--no-such-flag")...)
		if code != exitUsage || out != "" {
			t.Errorf("%s --no-such-flag: exit %d, stdout %q; want %d and nothing", name, code, out, exitUsage)
		}
		if want := "queuectl: hint: see: " + name + " --help\n"; !strings.HasSuffix(errText, want) {
			t.Errorf("%s --no-such-flag: stderr %q, want it to end in %q", name, errText, want)
		}
	}
}

// TestHelpWord: `queuectl help [COMMAND...]` is COMMAND's --help, also
// after the global flags; a --json given there is ignored, as it is by
// `queuectl --json status --help`.
func TestHelpWord(t *testing.T) {
	h := newHome(t)
	for _, tc := range []struct{ args, as string }{
		{"help", "--help"},
		{"help db", "db --help"},
		{"help db backup", "db backup --help"},
		{"help run", "run --help"},
		{"--json help status", "status --help"},
		{"--json help", "--help"},
		{"--json --help", "--help"},
		{"--json status --help", "status --help"},
		{"--json help dlq list", "dlq list --help"},
		{"--json help hold", "hold --help"},
		{"--json help worker start", "worker start --help"},
		{"--home " + h.dir + " help status", "status --help"},
		{"--db=" + h.location() + " --json help status", "status --help"},
	} {
		want, _, _ := h.run(strings.Fields(tc.as)...)
		out, errText, code := h.run(strings.Fields(tc.args)...)
		if code != 0 || out != want || !strings.Contains(out, "USAGE") {
			t.Errorf("queuectl %s: exit %d, stderr %q; want exit 0 and the help queuectl %s prints",
				tc.args, code, errText, tc.as)
		}
	}
}

// TestJobsNamedHelp: "help" and "h" are ids like any other (SPEC §3), so
// every command that takes an id acts on the job, and a prefix "h" that
// fits several is ambiguous (exit 2), never a request for help (exit 0).
func TestJobsNamedHelp(t *testing.T) {
	h := newHome(t)
	for _, id := range []string{"help", "h", "hj"} {
		h.must("enqueue", "--id", id, "--command", "true", "--delay", "1h")
	}
	if out := h.must("show", "--json", "help"); !strings.Contains(out, `"id": "help"`) {
		t.Errorf("show help printed %q, not the job help", out)
	}
	if _, errText, code := h.run("show", "hel"); code != 0 {
		t.Errorf("show hel (the prefix of one id): exit %d, %s", code, errText)
	}
	h.must("hold", "h") // an exact id wins over the ids it begins
	if got := h.show("h").State; got != "held" {
		t.Errorf("hold h: job h is %s, want held", got)
	}
	h.must("release", "h")
	h.must("cancel", "help")
	if got := h.show("help").State; got != "canceled" {
		t.Errorf("cancel help: job help is %s, want canceled", got)
	}
	h.must("restart", "help")
	if got := h.show("help").State; got != "pending" {
		t.Errorf("restart help: job help is %s, want pending", got)
	}
	h.must("cancel", "help")
	h.must("rm", "help")
	if _, _, code := h.run("show", "help"); code != exitNotFound {
		t.Errorf("after rm help, show help exits %d, want %d", code, exitNotFound)
	}
	h.must("enqueue", "--id", "hk", "--command", "true", "--delay", "1h")
	out, errText, code := h.run("cancel", "hj", "hk", "--no-wait")
	if code != 0 {
		t.Errorf("cancel hj hk: exit %d, %s%s", code, out, errText)
	}
	h.must("enqueue", "--id", "help", "--command", "true", "--delay", "1h")
	out, errText, code = h.run("wait", "hel", "--timeout", "1")
	if code != exitTimeout || strings.Contains(out, "USAGE") {
		t.Errorf("wait hel --timeout 1 on a pending job: exit %d, stdout %q, stderr %q; want %d", code, out, errText, exitTimeout)
	}
}

// gate is a job command that prints "one", waits until the test opens the
// gate, prints "two" and exits 0.
type gate struct{ started, open string }

func newGate(t *testing.T) gate {
	dir := t.TempDir()
	return gate{filepath.Join(dir, "started"), filepath.Join(dir, "open")}
}

func (g gate) command() string {
	return fmt.Sprintf("echo one; touch %s; while [ ! -e %s ]; do sleep 0.02; done; echo two", g.started, g.open)
}

func (g gate) waitStarted(t *testing.T) {
	t.Helper()
	waitFor(t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(g.started)
		return err == nil
	})
}

func (g gate) release(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(g.open, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLogsFollowsARunningJobToItsEnd(t *testing.T) {
	h := newHome(t)
	g := newGate(t)
	h.must("enqueue", "--id", "gated", "--command", g.command())
	h.start("worker", "start", "--no-spool")
	g.waitStarted(t)

	follow := h.start("logs", "-f", "gated")
	waitFor(t, 30*time.Second, "logs -f to print the first line", func() bool {
		return follow.stdout.String() == "one\n"
	})
	select {
	case <-follow.done:
		t.Fatalf("logs -f ended while the job was still running; stdout %q", follow.stdout)
	default:
	}
	g.release(t)
	if code := follow.exit(t, 30*time.Second); code != 0 {
		t.Fatalf("logs -f exit %d\n%s", code, follow.stderr)
	}
	if got := follow.stdout.String(); got != "one\ntwo\n" {
		t.Errorf("logs -f printed %q, want %q", got, "one\ntwo\n")
	}
	if j := h.show("gated"); j.State != "completed" {
		t.Errorf("after logs -f ended, the job is %s, want completed", j.State)
	}
}

// TestLogsFollowWaitsForTheJobToStart: `enqueue && logs -f` works before any
// worker has picked the job up.
func TestLogsFollowWaitsForTheJobToStart(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "later", "--command", "echo started")
	follow := h.start("logs", "-f", "later")
	h.must("status") // two full CLI round trips: time enough for a wrong exit
	h.must("status")
	select {
	case <-follow.done:
		t.Fatalf("logs -f ended before the job ran: exit %v\n%s", follow.err, follow.stderr)
	default:
	}
	h.start("worker", "start", "--no-spool")
	if code := follow.exit(t, 30*time.Second); code != 0 {
		t.Fatalf("logs -f exit %d\n%s", code, follow.stderr)
	}
	if got := follow.stdout.String(); got != "started\n" {
		t.Errorf("logs -f printed %q, want %q", got, "started\n")
	}
}

// TestWaitWakesOnChange: with the fallback poll set to an hour, wait still
// returns as soon as a worker finishes the job.
func TestWaitWakesOnChange(t *testing.T) {
	h := newHome(t)
	h.must("config", "set", "poll-interval", "1h")
	h.must("enqueue", "--id", "j", "--command", "true")
	wake := filepath.Join(h.dir, "queue.db-wake")
	if err := os.Remove(wake); err != nil {
		t.Fatal(err)
	}
	w := h.start("wait", "j")
	waitFor(t, 30*time.Second, "wait to watch the wake file", func() bool {
		_, err := os.Stat(wake)
		return err == nil
	})
	h.must("worker", "start", "--drain", "--no-spool")
	if code := w.exit(t, 30*time.Second); code != 0 {
		t.Fatalf("wait exit %d, want 0\n%s", code, w.stderr)
	}
}

func TestWaitInterrupted(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "later", "--delay", "1h", "--command", "true")
	wake := filepath.Join(h.dir, "queue.db-wake")
	if err := os.Remove(wake); err != nil {
		t.Fatal(err)
	}
	w := h.start("wait", "later")
	waitFor(t, 30*time.Second, "wait to watch the wake file", func() bool {
		_, err := os.Stat(wake)
		return err == nil
	})
	w.signal(t, syscall.SIGINT)
	if code := w.exit(t, 30*time.Second); code != exitInterrupted {
		t.Errorf("wait after SIGINT: exit %d, want %d\n%s", code, exitInterrupted, w.stderr)
	}
}

// TestWaitInterruptedJSON: wait --json stopped by Ctrl-C still prints one
// JSON array, the jobs as they stand, as it does at a timeout: a script
// reading its stdout gets a document, not nothing.
func TestWaitInterruptedJSON(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "later", "--delay", "1h", "--command", "true")
	wake := filepath.Join(h.dir, "queue.db-wake")
	if err := os.Remove(wake); err != nil {
		t.Fatal(err)
	}
	w := h.start("wait", "later", "--json")
	waitFor(t, 30*time.Second, "wait to watch the wake file", func() bool {
		_, err := os.Stat(wake)
		return err == nil
	})
	w.signal(t, syscall.SIGINT)
	if code := w.exit(t, 30*time.Second); code != exitInterrupted {
		t.Errorf("wait --json after SIGINT: exit %d, want %d\n%s", code, exitInterrupted, w.stderr)
	}
	var jobs []struct{ ID, State string }
	if err := json.Unmarshal([]byte(w.stdout.String()), &jobs); err != nil {
		t.Fatalf("wait --json after SIGINT: stdout %q is not a JSON array: %v", w.stdout.String(), err)
	}
	if len(jobs) != 1 || jobs[0].ID != "later" || jobs[0].State != "pending" {
		t.Errorf("wait --json after SIGINT printed %+v, want job later pending", jobs)
	}
}

// TestListInterruptedSaysNoError: Ctrl-C while list streams a big store
// ends it with 130, and only that: it said `queuectl: error: list jobs:
// context canceled`, as if the store had failed (so did wait --all).
func TestListInterruptedSaysNoError(t *testing.T) {
	h := newHome(t)
	h.startInput(strings.Repeat(`{"command": "true"}`+"\n", 20000), "enqueue", "-q", "-").exit(t, runLimit)
	if n := h.count("pending"); n != 20000 {
		t.Fatalf("%d jobs enqueued, want 20000", n)
	}
	out, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := h.command("list", "--json")
	cmd.Stdout = in
	l := h.startCmd(cmd)
	in.Close()
	// The first bytes read, list is streaming the jobs; it blocks on the
	// full pipe until read on, with its read of the store open.
	if _, err := io.ReadFull(out, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	l.signal(t, syscall.SIGINT)
	io.Copy(io.Discard, out)
	if code := l.exit(t, 30*time.Second); code != exitInterrupted || l.stderr.String() != "" {
		t.Errorf("list --json after SIGINT: exit %d, stderr %q; want %d and nothing", code, l.stderr, exitInterrupted)
	}
}

func TestWatchStopsOnSignal(t *testing.T) {
	h := newHome(t)
	w := h.start("watch")
	// The watcher works in a private directory named after its pid.
	ingesting := filepath.Join(h.dir, "spool", ".ingesting", fmt.Sprintf("%d-*", w.cmd.Process.Pid))
	waitFor(t, 30*time.Second, "watch to start", func() bool {
		m, _ := filepath.Glob(ingesting)
		return len(m) > 0
	})
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, 30*time.Second); code != 0 {
		t.Errorf("watch after SIGTERM: exit %d, want 0\n%s", code, w.stderr)
	}
}

func TestWorkerStopWaitTimesOut(t *testing.T) {
	h := newHome(t)
	g := newGate(t)
	h.must("enqueue", "--id", "gated", "--command", g.command())
	w := h.start("worker", "start", "--no-spool")
	g.waitStarted(t)

	// The worker finishes its job before it exits, and the job waits for the
	// gate. A timeout that ends before the first look still counts the worker.
	for _, timeout := range []string{"200ms", "1ns"} {
		_, errText, code := h.run("worker", "stop", "--wait", "--timeout", timeout)
		if code != exitTimeout || !strings.Contains(errText, "1 worker(s) still running") {
			t.Errorf("worker stop --wait --timeout %s with a job still running: exit %d, stderr %q; want %d", timeout, code, errText, exitTimeout)
		}
		// And why, and what stops it now: not a bare pid to guess at.
		hint := fmt.Sprintf("queuectl: hint: a stopping worker first finishes its running jobs (1: gated); kill -TERM %d stops them now and puts them back to pending; queuectl cancel ID ends them\n", w.cmd.Process.Pid)
		if !strings.HasSuffix(errText, hint) {
			t.Errorf("worker stop --wait --timeout %s with a job still running: stderr %q, want it to end with %q", timeout, errText, hint)
		}
	}
	g.release(t)
	if code := w.exit(t, 30*time.Second); code != 0 {
		t.Errorf("worker exit %d after worker stop, want 0\n%s", code, w.stderr)
	}
	h.must("worker", "stop", "--wait", "--timeout", "30s")
	if j := h.show("gated"); j.State != "completed" {
		t.Errorf("job %s, want completed: a stopping worker finishes its job", j.State)
	}
}

// finishedJobs makes a completed job ok, a dead job bad and a pending job
// later, with every optional field set on one of them.
func finishedJobs(t *testing.T, h *qhome) {
	t.Helper()
	h.must("enqueue", "--id", "ok", "--command", "echo ok", "--env", "A=1", "--cwd", t.TempDir(),
		"--unique-key", "k", "--timeout", "1m", "--priority", "3", "--queue", "q")
	h.must("enqueue", "--id", "bad", "--max-retries", "1", "--command", "exit 3")
	h.must("enqueue", "--id", "later", "--run-at", "2099-01-01T00:00:00Z", "--command", "true")
	h.must("worker", "start", "--drain", "--no-spool")
}

// TestListJSONIsOneArray: list --json prints exactly one JSON array for
// every state (an empty one too) and nothing on stderr.
func TestListJSONIsOneArray(t *testing.T) {
	h := newHome(t)
	finishedJobs(t, h)
	want := map[string]int{"": 3, "pending": 1, "processing": 0, "completed": 1, "failed": 0, "dead": 1}
	for state, n := range want {
		args := []string{"list", "--json"}
		if state != "" {
			args = append(args, "--state", state)
		}
		out, errText, code := h.run(args...)
		if code != 0 || errText != "" {
			t.Errorf("%v: exit %d, stderr %q; want 0 and nothing", args, code, errText)
		}
		dec := json.NewDecoder(strings.NewReader(out))
		var jobs []map[string]any
		if err := dec.Decode(&jobs); err != nil || jobs == nil {
			t.Errorf("%v printed %q: not one JSON array (%v)", args, out, err)
			continue
		}
		if _, err := dec.Token(); err != io.EOF {
			t.Errorf("%v printed more than one JSON value: %q", args, out)
		}
		if len(jobs) != n {
			t.Errorf("%v: %d jobs, want %d", args, len(jobs), n)
		}
	}
}

// TestJSONFieldsDocumented: every field that --json prints, in every
// command that has it, is named in docs/cli.md's JSON section, and job
// objects carry the fields SPEC §5 promises.
func TestJSONFieldsDocumented(t *testing.T) {
	h := newHome(t)
	finishedJobs(t, h)
	page, err := os.ReadFile("../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(page), "\n## JSON output\n")
	if !ok {
		t.Fatal(`docs/cli.md has no "## JSON output" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")

	outputs := map[string]string{}
	for _, args := range [][]string{
		{"status", "--json"}, {"list", "--json"}, {"show", "--json", "ok"}, {"show", "--json", "bad"},
		{"dlq", "list", "--json"}, {"config", "list", "--json"}, {"wait", "--json", "ok"}, {"logs", "--json", "--all", "bad"},
		{"enqueue", "--json", "--command", "true"}, {"enqueue", "--json", "--run-at", "2099-01-01T00:00:00Z", "--command", "true"},
	} {
		outputs[strings.Join(args, " ")] = h.must(args...)
	}
	for cmd, out := range outputs {
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%s: %v\n%s", cmd, err, out)
			continue
		}
		var missing []string
		for key := range keys(v) {
			if !strings.Contains(section, "`"+key+"`") {
				missing = append(missing, key)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s prints fields docs/cli.md's JSON section does not name: %v", cmd, missing)
		}
	}

	var jobs []map[string]any
	if err := json.Unmarshal([]byte(outputs["list --json"]), &jobs); err != nil {
		t.Fatal(err)
	}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)
	for _, j := range jobs {
		for _, k := range []string{"id", "command", "state", "attempts", "max_retries", "created_at", "updated_at"} {
			if _, ok := j[k]; !ok {
				t.Errorf("job %v has no %q", j["id"], k)
			}
		}
		for _, k := range []string{"created_at", "updated_at", "finished_at", "run_at"} {
			if s, ok := j[k].(string); ok && !stamp.MatchString(s) {
				t.Errorf("job %v: %s = %q, want RFC 3339 UTC with Z", j["id"], k, s)
			}
		}
	}
}

// keys collects the object keys anywhere in a decoded JSON value, except
// inside env, whose keys are the job's own.
func keys(v any) map[string]bool {
	out := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				out[k] = true
				if k != "env" {
					walk(e)
				}
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// TestFailedJobShowsNextRetryAt: a failed job's JSON names its next retry,
// the same time as run_after.
func TestFailedJobShowsNextRetryAt(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "flaky", "--backoff-base", "100", "--command", "exit 3")
	h.start("worker", "start", "--no-spool")
	var j map[string]any
	waitFor(t, 30*time.Second, "the job to fail once", func() bool {
		j = map[string]any{}
		return json.Unmarshal([]byte(h.must("show", "flaky", "--json")), &j) == nil && j["state"] == "failed"
	})
	if j["next_retry_at"] == nil || j["next_retry_at"] != j["run_after"] {
		t.Errorf("failed job: next_retry_at %v, run_after %v; want both, equal", j["next_retry_at"], j["run_after"])
	}
}

// TestStatusActiveAndBusy: active counts the live worker slots of every
// process, busy those running a job.
func TestStatusActiveAndBusy(t *testing.T) {
	h := newHome(t)
	g := newGate(t)
	h.must("enqueue", "--id", "gated", "--command", g.command())
	h.start("worker", "start", "--no-spool", "--count", "3")
	h.start("worker", "start", "--no-spool", "--count", "2", "--queue", "other")
	g.waitStarted(t)
	waitFor(t, 30*time.Second, "both workers to register", func() bool {
		return strings.Contains(h.must("status"), "\n  workers: 2\n")
	})
	out := h.must("status")
	for _, line := range []string{"\n  processing: 1\n", "\n  active: 5\n", "\n  busy: 1\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("status has no line %q:\n%s", strings.TrimSpace(line), out)
		}
	}
	var st struct{ Active, Busy int }
	if err := json.Unmarshal([]byte(h.must("status", "--json")), &st); err != nil || st.Active != 5 || st.Busy != 1 {
		t.Errorf("status --json: active %d, busy %d, %v; want 5, 1", st.Active, st.Busy, err)
	}
	g.release(t)
}

// TestWaitWarnsWithoutWorker: wait warns when no live worker serves the
// jobs' queues, says when one does, and warns again when it is gone.
func TestWaitWarnsWithoutWorker(t *testing.T) {
	h := newHome(t)
	g := newGate(t)
	h.must("enqueue", "--id", "gated", "--queue", "mail", "--command", g.command())
	w := h.start("wait", "gated")
	const warning = "queuectl: warning: no live worker serves queue mail; the jobs wait until one does\n"
	waitFor(t, 30*time.Second, "wait to warn", func() bool { return strings.Contains(w.stderr.String(), warning) })

	other := h.start("worker", "start", "--no-spool", "--queue", "video")
	worker := h.start("worker", "start", "--no-spool", "--queue", "mail")
	g.waitStarted(t)
	waitFor(t, 30*time.Second, "wait to see the worker", func() bool {
		return strings.Contains(w.stderr.String(), "queuectl: a worker serves queue mail now\n")
	})
	worker.signal(t, syscall.SIGKILL)
	worker.exit(t, 30*time.Second)
	waitFor(t, 30*time.Second, "wait to warn again", func() bool { return strings.Count(w.stderr.String(), warning) == 2 })

	h.start("worker", "start", "--no-spool", "--queue", "mail")
	g.release(t)
	if code := w.exit(t, 60*time.Second); code != 0 {
		t.Errorf("wait exit %d\n%s", code, w.stderr)
	}
	other.signal(t, syscall.SIGTERM)
}

// TestPauseTakesItsQueueAsAFlag: `pause heavy` is refused, before any
// queue is paused, with the command that pauses heavy.
func TestPauseTakesItsQueueAsAFlag(t *testing.T) {
	h := newHome(t)
	for _, verb := range []string{"pause", "resume"} {
		_, stderr, code := h.run(verb, "heavy")
		if want := "queuectl: hint: queuectl " + verb + " --queue heavy\n"; code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s heavy: exit %d, stderr %q; want 2 and %q", verb, code, stderr, want)
		}
	}
	if out := h.must("status"); !strings.Contains(out, "paused: -") {
		t.Errorf("status after a refused pause: %s; want nothing paused", out)
	}
}

// TestWaitWarnsOfPausedQueue: a job waiting in a paused queue starts on
// no worker until resume: wait says so, and says when it is resumed.
func TestWaitWarnsOfPausedQueue(t *testing.T) {
	h := newHome(t)
	g := newGate(t)
	h.must("pause", "--queue", "pq")
	h.must("enqueue", "--id", "held-up", "--queue", "pq", "--command", g.command())
	h.start("worker", "start", "--no-spool")
	waitFor(t, 30*time.Second, "the worker to register", func() bool {
		out, _, _ := h.run("status")
		return strings.Contains(out, "workers: 1")
	})
	w := h.start("wait", "held-up")
	waitFor(t, 30*time.Second, "wait to warn", func() bool {
		return strings.Contains(w.stderr.String(), "queuectl: warning: queue pq is paused; its jobs wait until it is resumed\n"+
			"queuectl: hint: queuectl resume --queue pq\n")
	})
	h.must("resume", "--queue", "pq")
	g.waitStarted(t)
	waitFor(t, 30*time.Second, "wait to see the queue resumed", func() bool {
		return strings.Contains(w.stderr.String(), "queuectl: queue pq is resumed\n")
	})
	g.release(t)
	if code := w.exit(t, 60*time.Second); code != 0 {
		t.Errorf("wait exit %d\n%s", code, w.stderr)
	}
	if strings.Contains(w.stderr.String(), "no live worker") {
		t.Errorf("wait took the paused queue for one no worker serves:\n%s", w.stderr)
	}
}

// TestWaitShowsProgressOnATerminal: with stderr on a terminal, wait keeps
// a line saying how many jobs are done; on a pipe it prints nothing.
func TestWaitShowsProgressOnATerminal(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "a", "--command", "true")
	h.must("enqueue", "--id", "b", "--max-retries", "1", "--command", "false")
	h.must("worker", "start", "--drain", "--no-spool")
	master, tty := testenv.OpenPTY(t)
	defer master.Close()
	cmd := h.command("wait", "a", "b")
	cmd.Stderr = tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out bytes.Buffer
	io.Copy(&out, master)
	cmd.Wait()
	if !strings.Contains(out.String(), "waiting: 2 of 2 done (1 completed, 1 dead)") {
		t.Errorf("wait on a terminal printed %q, want a progress line", out.String())
	}
	if _, errText, _ := h.run("wait", "a"); errText != "" {
		t.Errorf("wait on a pipe printed %q on stderr", errText)
	}
}

// TestLogsFollowsThroughRetries: logs -f follows the job from run to run
// until it is dead, and exits 1 as wait does; with --all, each run after
// its header. A run whose output leaves its last line open does not run
// into the next one's first.
func TestLogsFollowsThroughRetries(t *testing.T) {
	h := newHome(t)
	g := newGate(t)
	h.must("enqueue", "--id", "flaky", "--max-retries", "3", "--backoff-base", "1",
		"--command", g.command()+"; printf 'run %s' $QUEUECTL_ATTEMPT; exit 3")
	h.start("worker", "start", "--no-spool")
	g.waitStarted(t)
	follow := h.start("logs", "flaky", "-f")
	all := h.start("logs", "flaky", "-f", "--all")
	waitFor(t, 30*time.Second, "logs -f to print the first line", func() bool {
		return strings.HasPrefix(follow.stdout.String(), "one\n")
	})
	g.release(t)
	if code := follow.exit(t, 60*time.Second); code != 1 {
		t.Errorf("logs -f of a job that died: exit %d, want 1\n%s", code, follow.stderr)
	}
	want := "one\ntwo\nrun 1\none\ntwo\nrun 2\none\ntwo\nrun 3"
	if got := follow.stdout.String(); got != want {
		t.Errorf("logs -f printed %q, want %q", got, want)
	}
	if errText := follow.stderr.String(); !strings.Contains(errText, "queuectl: job flaky: run 1 ended (exit status 3); following run 2\n") ||
		!strings.HasSuffix(errText, "queuectl: error: dead: flaky\nqueuectl: hint: queuectl show flaky\n") {
		t.Errorf("logs -f stderr:\n%s", errText)
	}
	if code := all.exit(t, 60*time.Second); code != 1 {
		t.Errorf("logs -f --all: exit %d, want 1", code)
	}
	if got := strings.Count(all.stdout.String(), "== attempt "); got != 3 {
		t.Errorf("logs -f --all printed %d headers, want 3:\n%s", got, all.stdout)
	}
}

// TestBenchDir: bench --dir creates the directory; the scratch homes are
// removed at the end, or with --keep left and named with their size.
func TestBenchDir(t *testing.T) {
	h := newHome(t)
	dir := filepath.Join(t.TempDir(), "new", "qbench")
	_, errText, code := h.run("bench", "--only", "throughput", "--jobs", "5", "--slots", "1", "--dir", dir, "--keep")
	if code != 0 {
		t.Fatalf("bench --keep: exit %d\n%s", code, errText)
	}
	left := regexp.MustCompile(`queuectl: bench: left \d+ [kM]B of scratch homes in (\S+); remove them with: rm -rf \S+\n`).FindStringSubmatch(errText)
	if left == nil || filepath.Dir(left[1]) != dir {
		t.Fatalf("bench --keep did not say what it left in %s:\n%s", dir, errText)
	}
	if _, err := os.Stat(left[1]); err != nil {
		t.Errorf("bench --keep: %v", err)
	}
	_, errText, code = h.run("bench", "--only", "throughput", "--jobs", "5", "--slots", "1", "--dir", dir)
	if code != 0 || !strings.Contains(errText, "queuectl: bench: removed ") {
		t.Fatalf("bench without --keep: exit %d, stderr\n%s", code, errText)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%s holds %d entries after a run without --keep, want only the kept one", dir, len(entries))
	}
}

// TestBenchOnPostgres: bench --db runs a scenario on a scratch database of
// the server, enqueue waking the worker through NOTIFY, and drops the
// database at the end.
func TestBenchOnPostgres(t *testing.T) {
	server := pgtest.Server(t)
	h := newHome(t)
	out, errText, code := h.run("bench", "--db", server, "--only", "latency", "--samples", "3", "--json")
	if code != 0 {
		t.Fatalf("bench --db: exit %d\n%s", code, errText)
	}
	if !strings.Contains(out, "via NOTIFY") {
		t.Errorf("bench --db --only latency printed no NOTIFY row:\n%s", out)
	}
	made := regexp.MustCompile(`queuectl: bench: latency: store postgres://[^/]*/(queuectl_scratch_[0-9a-f]+)`).FindStringSubmatch(errText)
	if made == nil {
		t.Fatalf("bench --db did not say which scratch database it made:\n%s", errText)
	}
	conn, err := pgx.Connect(t.Context(), server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", made[1]).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("scratch database %s is still there after bench", made[1])
	}
}

// TestBenchDBNotAServer: bench --db with a file's path is refused at once.
func TestBenchDBNotAServer(t *testing.T) {
	h := newHome(t)
	_, errText, code := h.run("bench", "--db", filepath.Join(t.TempDir(), "queue.db"), "--only", "latency")
	if code != 2 || !strings.Contains(errText, "queuectl: error: ") || !strings.Contains(errText, "names no database server") ||
		!strings.Contains(errText, "queuectl: hint: ") {
		t.Errorf("bench --db FILE: exit %d, stderr\n%s\nwant exit 2, an error and a hint", code, errText)
	}
}

// TestExitCodesInDocs: the exit-code tables of README.md and docs/cli.md
// are exitMeanings, row for row (SPEC: one table, in the code and in the
// README).
func TestExitCodesInDocs(t *testing.T) {
	var want strings.Builder
	want.WriteString("| code | meaning |\n|---|---|\n")
	for _, e := range exitMeanings {
		fmt.Fprintf(&want, "| %d | %s |\n", e.code, e.meaning)
	}
	for _, doc := range []string{"../README.md", "../docs/cli.md"} {
		page, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), "\n## Exit codes\n\n"+want.String()+"\n") {
			t.Errorf("%s's exit-code table is not exitMeanings (cli/exit.go):\n%s", doc, want.String())
		}
	}
}

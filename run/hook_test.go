package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// logLines collects a worker's diagnostics.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// hookScript appends one line per hook run to dir/events: the hook's name
// and the variables the worker set ("-" for a log file it did not name).
func hookScript(dir, name string) string {
	return `printf '%s %s %s %s %s %s\n' ` + name + ` "$QUEUECTL_JOB_ID" "$QUEUECTL_STATE" "$QUEUECTL_ATTEMPT" "$QUEUECTL_EXIT_CODE" "$(basename "${QUEUECTL_STDOUT:--}")" >> ` + filepath.Join(dir, "events")
}

func TestHooksRunAfterEachEvent(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	w := newWorker(t, s)
	w.Config.Hooks = claim.Hooks{OnSuccess: hookScript(dir, "success"), OnFailure: hookScript(dir, "failure"),
		OnDead: hookScript(dir, "dead")}
	two, base := 2, 1
	enqueue(t, s, claim.NewJob{ID: "ok", Command: "echo fine"})
	enqueue(t, s, claim.NewJob{ID: "bad", Command: "exit 3", MaxRetries: &two, BackoffBase: &base})
	drain(t, w)

	got := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "events"))), "\n")
	want := map[string]bool{
		"success ok completed 1 0 1.out": true,
		// exit 3 printed nothing, so its runs have no log file to name.
		"failure bad failed 1 3 -": true,
		"failure bad dead 2 3 -":   true,
		"dead bad dead 2 3 -":      true,
	}
	if len(got) != len(want) {
		t.Fatalf("hook runs:\n%s\nwant the %d of %v", strings.Join(got, "\n"), len(want), want)
	}
	for _, line := range got {
		if !want[line] {
			t.Errorf("unexpected hook run %q; want one of %v", line, want)
		}
	}
	// on_failure of a run comes before on_dead of the death it caused.
	if i, j := strings.Index(strings.Join(got, "\n"), "failure bad dead"), strings.Index(strings.Join(got, "\n"), "dead bad dead"); i > j {
		t.Errorf("on_dead ran before the last on_failure:\n%s", strings.Join(got, "\n"))
	}
}

// TestHookLogVariablesNameOnlyFilesThatExist: QUEUECTL_STDOUT and
// QUEUECTL_STDERR are set only for a stream that printed something, as a
// stream that printed nothing leaves no file.
func TestHookLogVariablesNameOnlyFilesThatExist(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	w := newWorker(t, s)
	w.Config.Hooks.OnSuccess = `{ for f in "${QUEUECTL_STDOUT-unset}" "${QUEUECTL_STDERR-unset}"; do
		if [ "$f" = unset ] || [ -f "$f" ]; then echo "$(basename "$f")"; else echo "missing $f"; fi; done; } > ` + filepath.Join(dir, "$QUEUECTL_JOB_ID")
	enqueue(t, s, claim.NewJob{ID: "out", Command: "echo hi"})
	enqueue(t, s, claim.NewJob{ID: "err", Command: "echo oops >&2"})
	enqueue(t, s, claim.NewJob{ID: "quiet", Command: "true"})
	drain(t, w)
	for id, want := range map[string]string{"out": "1.out\nunset\n", "err": "unset\n1.err\n", "quiet": "unset\nunset\n"} {
		if got := readFile(t, filepath.Join(dir, id)); got != want {
			t.Errorf("job %s: hook saw QUEUECTL_STDOUT, QUEUECTL_STDERR as %q, want %q", id, got, want)
		}
	}
}

func TestHookSeesEventOnlyThroughItsEnvironment(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	w := newWorker(t, s)
	out := filepath.Join(dir, "command")
	w.Config.Hooks.OnSuccess = `printf '%s' "$QUEUECTL_COMMAND" > ` + out
	cmd := `echo '$(touch ` + filepath.Join(dir, "pwned") + `)' "; touch ` + filepath.Join(dir, "pwned2") + `"`
	enqueue(t, s, claim.NewJob{ID: "inj", Command: cmd})
	drain(t, w)
	if got := readFile(t, out); got != cmd {
		t.Errorf("hook saw QUEUECTL_COMMAND = %q, want %q", got, cmd)
	}
	for _, f := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("the job's command was run by the hook: %s exists", f)
		}
	}
}

func TestHookFailureNeverChangesTheJob(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	w := newWorker(t, s)
	var log logLines
	w.Events = func(e Event) { log.logf("%s", e) }
	w.Config.HookTimeout = time.Second
	pidFile := filepath.Join(dir, "hook.pid")
	w.Config.Hooks.OnSuccess = `echo "$$" > ` + pidFile + `; echo about to hang >&2; sleep 60`
	w.Config.Hooks.OnFailure = `echo no mail server >&2; exit 7`
	one := 1
	enqueue(t, s, claim.NewJob{ID: "fine", Command: "true"})
	enqueue(t, s, claim.NewJob{ID: "sad", Command: "false", MaxRetries: &one})
	drain(t, w)

	if j := get(t, s, "fine"); j.State != claim.Completed {
		t.Errorf("job fine is %s after its hook timed out, want completed", j.State)
	}
	if j := get(t, s, "sad"); j.State != claim.Dead || j.LastError != "exit status 1" {
		t.Errorf("job sad is %s (%q) after its hook failed, want dead (exit status 1)", j.State, j.LastError)
	}
	logged := log.String()
	for _, want := range []string{
		"job fine: on_success hook failed: timed out after 1s: about to hang",
		"job sad: on_failure hook failed: exit status 7: no mail server",
	} {
		if !strings.Contains(logged, want) {
			t.Errorf("worker log:\n%s\nwant a line containing %q", logged, want)
		}
	}
	pid := strings.TrimSpace(readFile(t, pidFile))
	if _, err := os.Stat("/proc/" + pid); err == nil {
		t.Errorf("the timed-out hook (pid %s) is still running", pid)
	}
}

// A worker asked to stop while only a hook runs says that it lets the hook
// finish, as it says of running jobs: it said nothing, and went on for up
// to hook-timeout without a word.
func TestStoppingWorkerSaysItWaitsForHooks(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	w := newWorker(t, s)
	w.Drain = false
	var log logLines
	w.Events = func(e Event) { log.logf("%s", e) }
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
	t.Cleanup(func() { os.WriteFile(release, nil, 0o600) }) // the hook ends, whatever failed
	w.Config.Hooks.OnSuccess = `touch ` + started + `; while [ ! -e ` + release + ` ]; do sleep 0.05; done`
	enqueue(t, s, claim.NewJob{ID: "done", Command: "true"})
	soft, stop := context.WithCancel(context.Background())
	defer stop()
	ended := make(chan error, 1)
	go func() { ended <- w.Run(soft, context.Background()) }()
	waitFor(t, "the hook to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	stop()
	waitFor(t, "the worker to say it lets the hook finish", func() bool {
		return strings.Contains(log.String(), "stopping: letting 1 running hook(s) finish; signal again to stop them now")
	})
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}

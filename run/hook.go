package run

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A hook is a shell command that runs after one of a job's events has been
// committed: on_success after it completed, on_failure after each failed
// run (the last one too), on_dead after it died. The job's own hook wins over
// the config's default. Hooks run in the background, one after another per
// event, so that a slow hook never holds a slot; Run waits for them before it
// returns. A hook's failure is logged (a warning event) and recorded with the
// run for `show`, and never
// changes the job: its outcome was committed before the hook began. A worker
// that dies between the commit and the hook loses that hook run, never the
// job.
type hookRun struct {
	name    string // on_success, on_failure, on_dead
	command string
}

// hooksFor lists the hooks that follow a run's end: state is the job's state
// after it (completed, failed or dead); failedRun is whether the run itself
// failed (a job lost too often dies without a failed run).
func (w *Worker) hooksFor(j claim.Job, state claim.State, failedRun bool) []hookRun {
	h := j.Hooks.Or(w.settings().Hooks)
	var out []hookRun
	if state == claim.Completed && h.OnSuccess != "" {
		out = append(out, hookRun{"on_success", h.OnSuccess})
	}
	if failedRun && h.OnFailure != "" {
		out = append(out, hookRun{"on_failure", h.OnFailure})
	}
	if state == claim.Dead && h.OnDead != "" {
		out = append(out, hookRun{"on_dead", h.OnDead})
	}
	return out
}

// hookEvent is what a hook is told about the event, in its environment.
type hookEvent struct {
	job      claim.Job
	run      claim.Run
	state    claim.State
	exitCode *int
	err      string
}

// fireHooks starts the hooks of ev in the background. hard ends them early:
// a worker told to stop now does not wait for hooks.
func (w *Worker) fireHooks(hard context.Context, ev hookEvent, hooks []hookRun) {
	if len(hooks) == 0 {
		return
	}
	w.hooks.Add(1)
	w.hooksRunning.Add(1)
	go func() {
		defer w.hooks.Done()
		defer w.hooksRunning.Add(-1)
		for _, h := range hooks {
			res := w.runHook(hard, h, ev)
			w.emit(Event{Kind: EventHook, Job: ev.job.ID, Run: ev.run.Attempt, Hook: h.name, Err: res})
			w.recordHook(hard, ev, h, res)
		}
	}()
}

// recordHook stores how a hook ended with the run it followed, for `show`.
func (w *Worker) recordHook(hard context.Context, ev hookEvent, h hookRun, failure string) {
	if w.Store == nil {
		return
	}
	text := h.name + " ok"
	if failure != "" {
		text = h.name + " failed: " + strings.Join(strings.Fields(failure), " ")
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(hard), 10*time.Second)
	defer cancel()
	if err := w.Store.HookDone(ctx, ev.run, text); err != nil {
		w.logf("job %s: record %s hook: %v", ev.job.ID, h.name, err)
	}
}

// hookOutputTail bounds how much of a failed hook's output the log and the
// run record keep.
const hookOutputTail = 512

// runHook runs one hook to its end, bounded by hook-timeout, and says why it
// failed ("" when it exited 0). The event reaches it only through the
// environment: the command is run as written, so no job id or output can
// inject shell code into it.
func (w *Worker) runHook(hard context.Context, h hookRun, ev hookEvent) string {
	timeout := w.settings().HookTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(hard, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", h.command)
	cmd.Env = append(os.Environ(), hookEnv(ev)...)
	out := &tailBuffer{max: hookOutputTail}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own group, and no terminal, as a job (childAttr).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := startChild(cmd)
	if err == nil {
		// What the hook started in the background ends with it, as a
		// job's processes end with the job: left running, it would also
		// hold the hook's output open, and its end be taken for the
		// hook's failure.
		err = waitChildThen(cmd, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	}
	var why string
	switch {
	case err == nil:
		return ""
	case ctx.Err() == context.DeadlineExceeded:
		why = fmt.Sprintf("timed out after %v", timeout)
	case hard.Err() != nil:
		why = "stopped by worker shutdown"
	default:
		why = describeExit(err)
	}
	if text := strings.TrimSpace(out.String()); text != "" {
		why += ": " + text
	}
	return why
}

func hookEnv(ev hookEvent) []string {
	code := ""
	if ev.exitCode != nil {
		code = strconv.Itoa(*ev.exitCode)
	}
	env := []string{
		"QUEUECTL_JOB_ID=" + ev.job.ID,
		"QUEUECTL_STATE=" + string(ev.state),
		"QUEUECTL_ATTEMPT=" + strconv.Itoa(ev.run.Attempt),
		"QUEUECTL_EXIT_CODE=" + code,
		"QUEUECTL_ERROR=" + ev.err,
		"QUEUECTL_COMMAND=" + ev.job.Command,
	}
	// A stream that printed nothing has no file: its variable is left out,
	// so that a hook can test for it instead of reading a missing file.
	for name, path := range map[string]string{"QUEUECTL_STDOUT": ev.run.StdoutPath, "QUEUECTL_STDERR": ev.run.StderrPath} {
		if fi, err := os.Lstat(path); path != "" && err == nil && fi.Mode().IsRegular() {
			env = append(env, name+"="+path)
		}
	}
	return env
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	s := strings.ToValidUTF8(string(t.buf), "?")
	if t.cut {
		return "…" + s
	}
	return s
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/urfave/cli/v2"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a command as a job and wait for it: its output here, its exit code",
		ArgsUsage: "-- CMD [ARGS...]",
		Description: `Enqueues CMD with its arguments (each quoted, never read by a shell twice) or
--shell 'CMD', in this directory and with this environment unless --cwd and --env say
otherwise. Then waits for a worker to run it, writes its stdout and stderr here as it runs,
attempt after attempt, and exits with its last attempt's exit code. --timeout limits each
attempt: when one runs out of time, the job is canceled and run exits 124. Ctrl-C cancels
the job and exits 130 (--detach-on-interrupt leaves it running). A job canceled elsewhere ends
run with 1.

Example: queuectl run --queue heavy -- pg_dump -f app.sql app`,
		Flags: append(jobFlags(),
			&cli.StringFlag{Name: "shell", Usage: "run the shell command `CMD` (instead of -- CMD ARGS...)"},
			&cli.BoolFlag{Name: "detach-on-interrupt", Usage: "on Ctrl-C, leave the job to run on its own"},
			&cli.BoolFlag{Name: "no-wait-for-worker", Usage: "exit 1 when no live worker serves the queue"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the job's own output"},
		),
		Action: withHome(runJob),
	}
}

func runJob(c *cli.Context, h *home) error {
	nj, err := runSpec(c)
	if err != nil {
		return err
	}
	if err := resolveAfter(c.Context, h.store, &nj); err != nil {
		return err
	}
	if err := checkWorkers(c, h, nj.Queue); err != nil {
		return err
	}
	r, err := h.store.Enqueue(c.Context, nj)
	if err != nil {
		return err
	}
	own := r.Outcome == claim.Created
	if !own {
		logf(c)("job %s holds unique key %q and is %s: following it", r.Job.ID, r.Job.UniqueKey, r.Job.State)
	}
	f := &follower{c: c, h: h, id: r.Job.ID, timeout: r.Job.Timeout}
	j, err := f.follow()
	switch {
	case errors.Is(f.cause(), errAttemptTimedOut):
		if own && (err != nil || !finished(j.State)) {
			f.stop()
		}
		return &exitStatus{exitTimeout, fmt.Errorf("job %s: an attempt ran out of its %v", r.Job.ID, r.Job.Timeout)}
	case err != nil && c.Context.Err() != nil:
		if own && !c.Bool("detach-on-interrupt") {
			f.stop()
		} else {
			logf(c)("job %s goes on; follow it with: queuectl logs -f %s", r.Job.ID, r.Job.ID)
		}
		return &exitStatus{exitInterrupted, nil}
	case err != nil:
		return err
	}
	return jobExit(j)
}

// jobExit is run's exit for a finished job: its last attempt's exit code
// when it is dead, 1 when someone else canceled it.
func jobExit(j claim.Job) error {
	switch {
	case j.State == claim.Completed:
		return nil
	case j.State != claim.Dead:
		return &exitStatus{exitFailure, fmt.Errorf("job %s was %s", j.ID, j.State)}
	case j.ExitCode != nil && *j.ExitCode > 0 && *j.ExitCode < 256:
		return &exitStatus{*j.ExitCode, nil}
	case j.LastError == "":
		return &exitStatus{exitFailure, fmt.Errorf("job %s is dead", j.ID)}
	}
	return &exitStatus{exitFailure, fmt.Errorf("job %s is dead: %s", j.ID, j.LastError)}
}

// runSpec makes the job of run's flags and arguments: the caller's
// directory and environment unless --cwd and --env say otherwise.
func runSpec(c *cli.Context) (claim.NewJob, error) {
	a := c.Args().Slice()
	command := c.String("shell")
	switch {
	case c.IsSet("shell") && len(a) > 0:
		return claim.NewJob{}, withHint(usagef("give the command one way: --shell 'CMD' or -- CMD ARGS..., not both"),
			"queuectl run -- make test  or  queuectl run --shell 'make test 2>&1 | tee log'")
	case !c.IsSet("shell") && len(a) == 0:
		return claim.NewJob{}, withHint(usagef("no command to run"), "queuectl run [flags] -- CMD [ARGS...]")
	case len(a) > 0:
		command = shellQuote(a)
	}
	nj, err := jobFromFlags(c, command)
	if err != nil {
		return nj, err
	}
	if nj.Cwd == "" {
		if nj.Cwd, err = os.Getwd(); err != nil {
			return nj, fmt.Errorf("current directory: %w", err)
		}
	}
	env := callerEnv()
	for k, v := range nj.Env {
		env[k] = v
	}
	nj.Env = env
	return nj, nj.Validate()
}

// callerEnv is this process's environment as a job's env, without the
// variables a worker sets for each job itself.
func callerEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if k != "" && k != "QUEUECTL_JOB_ID" && k != "QUEUECTL_ATTEMPT" && !strings.ContainsRune(kv, 0) {
			env[k] = v
		}
	}
	return env
}

// shellQuote joins words into one /bin/sh command line that runs them as
// they are: each word is single-quoted unless it is made of characters no
// shell treats specially.
func shellQuote(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
			b.WriteString(w)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(w, "'", `'\''`) + "'")
	}
	return b.String()
}

// checkWorkers says at once, as wait does, when no live worker serves
// queue, and refuses to go on with --no-wait-for-worker.
func checkWorkers(c *cli.Context, h *home, queue string) error {
	if queue == "" {
		queue = "default"
	}
	live, err := liveWorkers(c.Context, h)
	if err != nil || served(queue, live) {
		return err
	}
	hint := "queuectl worker start --queue " + queue
	if c.Bool("no-wait-for-worker") {
		return withHint(fmt.Errorf("no live worker serves queue %s", queue), hint)
	}
	logf(c)("warning: no live worker serves queue %s; the job waits until one does", queue)
	logf(c)("hint: %s", hint)
	return nil
}

// errAttemptTimedOut ends a follow when an attempt outlives --timeout.
var errAttemptTimedOut = errors.New("attempt timed out")

// follower streams one job's runs to the caller, announces each attempt
// on stderr, and watches --timeout.
type follower struct {
	c       *cli.Context
	h       *home
	id      string
	timeout time.Duration

	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
}

func (f *follower) follow() (claim.Job, error) {
	f.ctx, f.cancel = context.WithCancelCause(f.c.Context)
	defer f.cancel(nil)
	defer f.disarm()
	t := &run.Tail{Store: f.h.store, Stdout: f.c.App.Writer, Stderr: f.c.App.ErrWriter,
		Every: 50 * time.Millisecond, Poll: min(f.h.config.PollInterval, 200*time.Millisecond), Event: f.event}
	return t.Follow(f.ctx, f.id)
}

func (f *follower) cause() error { return context.Cause(f.ctx) }

// event announces a run's start and end, and keeps a timer on the running
// attempt. An attempt that failed after running its whole --timeout was
// killed by its worker for it.
func (f *follower) event(e run.TailEvent) {
	f.disarm()
	if !e.Ended {
		if e.Run.Host != run.HostID() {
			f.announce("attempt %d of %d started on %s: its output shows when it ends (the last %s of each stream)",
				e.Run.Attempt, e.Job.MaxRetries, e.Run.HostName(), report.Bytes(claim.TailBytes))
		} else {
			f.announce("attempt %d of %d started", e.Run.Attempt, e.Job.MaxRetries)
		}
		if f.timeout > 0 {
			f.timer = time.AfterFunc(time.Until(e.Run.StartedAt.Add(f.timeout)), func() { f.cancel(errAttemptTimedOut) })
		}
		return
	}
	switch e.Run.Outcome {
	case claim.OutcomeFailed:
		if f.timeout > 0 && e.Run.EndedAt.Sub(e.Run.StartedAt) >= f.timeout {
			f.cancel(errAttemptTimedOut)
		}
		switch e.Job.State {
		case claim.Dead:
			f.announce("attempt %d failed (%s); no attempts left", e.Run.Attempt, e.Run.Error)
		case claim.Failed:
			wait := max(time.Until(e.Job.RunAfter).Round(time.Second), 0)
			f.announce("attempt %d failed (%s); next attempt in %v", e.Run.Attempt, e.Run.Error, wait)
		default:
			f.announce("attempt %d failed (%s)", e.Run.Attempt, e.Run.Error)
		}
	case claim.OutcomeLost:
		f.announce("attempt %d was lost with its worker; it runs again", e.Run.Attempt)
	case claim.OutcomeInterrupted:
		f.announce("attempt %d was interrupted (%s); it runs again", e.Run.Attempt, e.Run.Error)
	}
}

func (f *follower) disarm() {
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
}

func (f *follower) announce(format string, a ...any) {
	if !f.c.Bool("quiet") {
		logf(f.c)("job %s: "+format, append([]any{f.id}, a...)...)
	}
}

// stopWait bounds how long run waits, once interrupted or timed out, for
// its job's worker to stop the job's processes.
const stopWait = 5 * time.Second

// stop cancels the job, outside the command's ended context, and waits a
// little for its processes to be stopped.
func (f *follower) stop() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(f.c.Context), stopWait)
	defer cancel()
	_, _, err := f.h.store.Cancel(ctx, f.id)
	if errors.Is(err, claim.ErrConflict) {
		return // it finished meanwhile
	}
	if err == nil {
		_, err = f.h.store.Wait(ctx, []string{f.id}, f.h.config.PollInterval)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		logf(f.c)("job %s is canceled; its worker is still stopping its processes", f.id)
	case err != nil:
		logf(f.c)("job %s: cancel: %v", f.id, err)
	}
}

// finished reports whether a job is done for good: completed, dead or
// canceled.
func finished(s claim.State) bool { return s.Finished() }

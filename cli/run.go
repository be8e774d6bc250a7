package cli

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/queuectl/queuectl/front"

	"github.com/urfave/cli/v2"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/handoff"
	"github.com/queuectl/queuectl/run"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a command as a job and wait for it: its output here, its exit code",
		ArgsUsage: "-- CMD [ARGS...]",
		Description: `Enqueues CMD with its arguments (each quoted, never read by a shell twice; bytes that are
not UTF-8, as in a Latin-1 file name, spelled "$(printf '\351')" in the stored command) or
--shell 'CMD', in this directory and with this environment unless --cwd and --env say
otherwise, and under this umask: the files CMD makes get the modes they would get run here,
whatever the worker's umask (show says which). Then waits for a worker to run it, writes its
stdout and stderr here as it runs, and exits with its exit code. It makes one attempt, as running CMD itself would, whatever
config max-retries says: --max-retries N (or --retries N) makes up to N, and run exits with
the last one's exit code. --timeout limits each attempt: when one runs out of time, its worker
ends it failed ("timed out after …", as show keeps it), the job is canceled if it had attempts
left, and run exits 124 (5 s after, for a job that traps the worker's TERM: its last attempt
goes on until the worker's KILL at the end of stop-timeout, and ends dead, timed out; an
attempt with others after it is canceled). Ctrl-C cancels the job and exits 130 (--detach-on-interrupt
leaves it running); so do Ctrl-\ (exit 131), a hangup (but under nohup) and a closed output
pipe, as they would end CMD. Ctrl-Z stops run and, when a worker of this host follows the
job for it, the job's processes too; fg or bg lets both go on. Started with SIGINT ignored (a script's background command), run
leaves Ctrl-C alone, as CMD would. A job canceled elsewhere ends run with 1. While the job
waits, run says why on stderr, once: its queue is at its limit (queue set --max-running) or
paused, every slot of the workers serving its queue has been busy for a second, or, as wait says it, the job is held, scheduled more than a few seconds ahead, or waits
on such a job (again when that changes), and then when it starts. A job that starts at once
starts without a word, as CMD would; a failed attempt is said, and the start of the next. The job's stdin is /dev/null, and run never reads its
own, so a loop over lines (while read f; do queuectl run -- cc -c "$f"; done < list) gets them
all: give a job input in its command, --shell 'CMD < FILE'. A store
that goes away while run follows its job (a PostgreSQL server restarting) is waited out, as
a worker does: the job goes on, and run says once on stderr that the store is unreachable and
once that it is back. On a full disk, a job that ended waits for its end to be recorded, and
run with it: it says so once on stderr, and where, writes the end of the output the log could
not keep (the last 64 KiB of each stream, after saying how much is missing), and exits with
the job's exit code once there is room. run's own flags come before CMD: its first word ends them, and the
flags after it are CMD's (run grep -q x f gives -q to grep), as with env and nohup.

Example: queuectl run --queue heavy -- pg_dump -f app.sql app`,
		Flags: append(runJobFlags(),
			&cli.StringFlag{Name: "shell", Usage: "run the shell command `CMD` (instead of -- CMD ARGS...)"},
			&cli.BoolFlag{Name: "detach-on-interrupt", Usage: "on Ctrl-C, leave the job to run on its own"},
			&cli.BoolFlag{Name: "no-wait-for-worker", Usage: "exit 1 when no live worker serves the queue"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the job's own output (and errors, and that no live worker serves the queue)"},
		),
		Action: runAction,
	}
}

// runJobFlags are enqueue's job flags, but for --max-retries, which says
// that run makes one attempt unless told otherwise.
func runJobFlags() []cli.Flag {
	flags := jobFlags()
	for i, f := range flags {
		if f.Names()[0] == "max-retries" {
			flags[i] = &cli.IntFlag{Name: "max-retries", Aliases: []string{"retries"},
				Usage: "`N` attempts before the job is dead (default: 1, as running the command itself)"}
		}
	}
	return flags
}

// runAction hands the job to the worker serving this home's socket, which
// stores it and sends its runs back on the connection (runstream.go); with
// no such worker, or one that declines it, run stores the job and follows
// it in the store itself.
//
// Either way the job carries only what of the caller's environment the
// live workers lack (runEnv: the worker works it out for a job handed to
// it), and the --env values. Neither is ever shown (but by show --env).
func runAction(c *cli.Context) error {
	nj, err := runSpec(c)
	if err != nil {
		return err
	}
	// SIGHUP and a closed output pipe interrupt run too (front.Interrupts).
	ctx, stop := front.Interrupts(c.Context)
	defer stop()
	c.Context = ctx
	suspender := front.Suspends()
	environ := front.RunEnv(os.Environ())
	start := time.Now()
	res, resuming := resumed(c)
	var handed error
	if resuming {
		nj.ID, start, handed = res.ID, res.Start, handoff.ErrUnknown
	} else {
		if c.IsSet("after") {
			if err := withStore(func(c *cli.Context, h *home) error { return resolveAfter(c.Context, h.store, &nj) })(c); err != nil {
				return err
			}
		}
		var s *handoff.Stream
		suspender.Expect() // the worker may start the job before its answer is read
		if s, handed = runHandOff(c, &nj, environ); handed == nil {
			return runStreamed(c, s, suspender)
		}
		suspender.Follow(nil)
	}
	return withHome(func(c *cli.Context, h *home) error {
		// A worker still starting may serve the job (`worker start &` then
		// run, in a script). Asked before the registry is read: one that
		// registers in between is in it.
		starting := run.WorkerStarting(h.dir)
		live, err := liveWorkers(c.Context, h)
		if err != nil {
			return err
		}
		nj.Env = withExplicit(runEnv(environ, cmp.Or(nj.Queue, claim.DefaultQueue), live, nil), nj.Env)
		if err := nj.Validate(); err != nil {
			return err
		}
		// A job the worker may have stored already (the front's, resumed
		// here) may have run, and even ended: whether it waits for a worker
		// is known once it is read. --no-wait-for-worker refuses a job of
		// its own before it is stored; the warning waits until the store
		// took the job, so that a job refused for its input (an unknown
		// --after, a missing --cwd) is not said to wait for a worker.
		stored := errors.Is(handed, handoff.ErrUnknown)
		if !stored && c.Bool("no-wait-for-worker") {
			if err := checkWorkers(c, nj, live); err != nil {
				return err
			}
		}
		answered := saySlow(c, h)
		r, err := h.store.Enqueue(c.Context, nj)
		answered()
		if err != nil && stored {
			var rs []claim.Result
			if rs, err = handedAfterAll(c, h, nj, start, err); err == nil {
				r = rs[0]
			}
		}
		if err != nil {
			return err
		}
		waitsForWorker := !finished(r.Job.State) && !starting && !served(cmp.Or(nj.Queue, claim.DefaultQueue), live)
		if waitsForWorker {
			if err := checkWorkers(c, nj, live); err != nil {
				return err
			}
		}
		f := newFollower(c, r)
		f.h = h
		f.said = f.said || waitsForWorker
		f.unserved = waitsForWorker
		if resuming {
			f.seen.resume(res)
			f.lines.Open = res.Open // as the front left the job's stderr
			f.said = f.said || res.Said
		}
		j, err := f.follow()
		return f.end(j, err)
	})(c)
}

// end is run's exit once its job is followed to j (or err): it cancels its
// own job when interrupted (but with --detach-on-interrupt) or timed out.
func (f *follower) end(j claim.Job, err error) error {
	switch {
	case errors.Is(f.cause(), errAttemptTimedOut):
		switch {
		case !f.own || f.over || err == nil && finished(j.State):
		case errors.Is(f.cause(), errOverdue):
			f.notice("job %s goes on after SIGTERM; its worker kills it once its stop-timeout is over, and it ends dead, timed out", f.name)
		default:
			f.stop()
		}
		f.lines.Break()
		return &exitStatus{exitTimeout, fmt.Errorf("job %s: an attempt ran out of its %v", f.name, f.timeout)}
	case err != nil && (f.c.Context.Err() != nil || front.IsInterruption(f.cause())):
		if f.own && !f.c.Bool("detach-on-interrupt") {
			f.stop()
		} else {
			f.notice("job %s goes on; follow it with: queuectl logs -f %s", f.name, f.id)
		}
		return f.exit()
	case err != nil:
		return err
	case front.OutputGone(f.cause()):
		return f.exit() // the job ended, but not all its output was written
	}
	if j.State == claim.Dead && !f.c.Bool("quiet") {
		f.lines.Break()
		f.explain(j)
	}
	return jobExit(j)
}

// exit is run's end when its follow was interrupted (front.Exit): Main
// ends the process by the signal it names, if any, once the command's
// store is closed.
func (f *follower) exit() error {
	code, sig, err := front.Exit(f.cause())
	if sig != 0 {
		return endedBy{&exitStatus{code, err}, sig}
	}
	return &exitStatus{code, err}
}

// explain says why j died (see explain). A job followed on the worker's
// connection has no store open: only then, on the way out, is it opened.
func (f *follower) explain(j claim.Job) {
	if f.h != nil {
		explain(f.c, f.h, j)
		return
	}
	withHome(func(c *cli.Context, h *home) error {
		explain(c, h, j)
		return nil
	})(f.c)
}

// jobExit is run's exit for a finished job: its last attempt's exit code
// when it is dead, 1 when someone else canceled it.
func jobExit(j claim.Job) error {
	switch {
	case j.State == claim.Completed:
		return nil
	case j.State != claim.Dead:
		return &exitStatus{exitFailure, fmt.Errorf("job %s was %s", front.Named(j.ID, j.Label), j.State)}
	case j.ExitCode != nil && *j.ExitCode > 0 && *j.ExitCode < 256:
		return &exitStatus{*j.ExitCode, nil}
	case j.LastError == "":
		return &exitStatus{exitFailure, fmt.Errorf("job %s is dead", front.Named(j.ID, j.Label))}
	}
	return &exitStatus{exitFailure, fmt.Errorf("job %s is dead: %s", front.Named(j.ID, j.Label), j.LastError)}
}

// runSpec makes the job of run's flags and arguments: in the caller's
// directory unless --cwd says otherwise, under the caller's umask, with
// the --env values only (the caller's environment is laid under them:
// runEnv, withExplicit).
func runSpec(c *cli.Context) (claim.NewJob, error) {
	a := c.Args().Slice()
	command := c.String("shell")
	switch {
	case c.IsSet("shell") && len(a) > 0:
		return claim.NewJob{}, withHint(usagef("give the command one way: --shell 'CMD' or -- CMD ARGS..., not both"),
			"queuectl run -- make test  or  queuectl run --shell 'make test 2>&1 | tee log'")
	case !c.IsSet("shell") && len(a) == 0:
		return claim.NewJob{}, withHint(usagef("no command to run"), "queuectl run [flags] -- CMD [ARGS...]")
	case len(a) > 0 && a[0] == "":
		// run -- "$cmd" with cmd unset: sh would run no command and exit 127.
		return claim.NewJob{}, withHint(usagef("the command to run is empty"), "queuectl run [flags] -- CMD [ARGS...]")
	case len(a) > 0:
		command = shellQuote(a)
	}
	nj, err := jobFromFlags(c, command)
	if err != nil {
		return nj, err
	}
	if nj.MaxRetries == nil {
		one := 1
		nj.MaxRetries = &one
	}
	if nj.Cwd == "" {
		if nj.Cwd, err = os.Getwd(); err != nil {
			return nj, fmt.Errorf("current directory: %w", err)
		}
	}
	mask := front.Umask() // read as the program started (front.Umask)
	nj.Umask = &mask
	return nj, nj.Validate()
}

// withExplicit lays the --env values over env, and returns it.
func withExplicit(env, explicit map[string]string) map[string]string {
	for k, v := range explicit {
		env[k] = v
	}
	return env
}

// shellQuote joins words into one /bin/sh command line (front.ShellQuote).
func shellQuote(words []string) string { return front.ShellQuote(words) }

// checkWorkers says at once, as wait does, when no live worker serves
// nj's queue (naming nj by its label, if any), and refuses to go on with
// --no-wait-for-worker. runAction asks it of a job the store took that
// has not ended (a job that ended waits for no worker), and, with
// --no-wait-for-worker, of its own job before storing it.
func checkWorkers(c *cli.Context, nj claim.NewJob, live []claim.WorkerInfo) error {
	queue := cmp.Or(nj.Queue, claim.DefaultQueue)
	if served(queue, live) {
		return nil
	}
	hint := "queuectl worker start --queue " + queue
	if c.Bool("no-wait-for-worker") {
		return withHint(fmt.Errorf("no live worker serves queue %s", queue), hint)
	}
	job := "the job"
	if nj.Label != "" {
		job += " (" + nj.Label + ")" // which of make -j's targets
	}
	logf(c)("warning: no live worker serves queue %s; %s waits until one does", queue, job)
	logf(c)("hint: %s", hint)
	return nil
}

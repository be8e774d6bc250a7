package front

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
	"github.com/queuectl/queuectl/handoff/wire"
)

// errTimedOut ends a follow when an attempt outlives the job's timeout.
var errTimedOut = errors.New("attempt timed out")

// errOverdue ends a follow when the job's last attempt outlives its
// timeout by TimeoutGrace: its worker timed it out, and it goes on after
// SIGTERM (it traps it) until the worker's KILL once its stop-timeout is
// over, which ends it dead, "timed out after …". run exits 124 and leaves
// it to that: a cancel would kill it no sooner, and leave it canceled with
// no word of why. (An attempt with others after it is canceled: run's
// job makes no attempt after one that timed out.)
var errOverdue = fmt.Errorf("%w, and goes on after SIGTERM", errTimedOut)

// stopWait bounds how long run waits, once interrupted or timed out, for
// its job's worker to stop the job's processes (as the full program).
const stopWait = 5 * time.Second

// TimeoutGrace is how long after an attempt's --timeout run ends by
// itself. The worker's own timeout comes first: it ends the attempt
// failed, "timed out after …", which show and the dead letters keep, and
// run then exits 124. Ended at the same instant, the job was canceled
// with no word of why. Run's own end is for a job that outlives its
// worker's TERM (it traps it): errOverdue.
const TimeoutGrace = 5 * time.Second

// follower is the full program's run follower (cli/runfollow.go) for a
// job followed on its worker's connection only: whatever needs the store
// is left to the full program, through a Resume.
type follower struct {
	c      *call
	s      *wire.Stream
	id     string
	name   string // id, with the job's label (Named)
	res    Resume
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	tout   time.Duration
	lines  *Lines // the job's stderr, for a notice after an open line
	remote bool   // a run started on another host: the full program says so
	said   bool   // why the job waits was said: its start is told (Told)
	over   bool   // an event said that the job is finished
}

// run hands nj over for run and follows it to its end.
func (c *call) run(sock, db string, nj jobs.NewJob, start time.Time) (int, bool) {
	// Ctrl-C from here on cancels the job, as in the full program. The
	// watch is never stopped: the process ends with the follow (or execs
	// the full program, which resets every caught signal), and stopping it
	// waits for the runtime's signal goroutine to go idle, which cost a
	// `run` 20 thread switches of its 60.
	ctx, _ := Interrupts(context.Background())
	suspender := Suspends()
	suspender.Expect() // the worker may start the job before its answer is read
	s, err := wire.RunBrief(sock, db, nj, RunEnv(os.Environ()))
	if err == nil && s.Outcome == jobs.Created {
		suspender.Follow(s)
	} else {
		suspender.Follow(nil)
	}
	res := Resume{ID: nj.ID, Start: start}
	switch {
	case errors.Is(err, wire.ErrUnknown):
		return Full(c.args, &res), true
	case err != nil:
		return 0, false
	case s.Outcome != jobs.Created:
		s.Close() // a unique key held by another job: the full program says so
		return Full(c.args, &res), true
	}
	defer s.Close()
	f := &follower{c: c, s: s, id: nj.ID, name: Named(nj.ID, nj.Label), res: res, tout: s.Job.Timeout}
	f.ctx, f.cancel = context.WithCancelCause(ctx)
	defer f.cancel(nil)
	j, err := f.follow()
	return f.end(j, err), true
}

func (f *follower) follow() (jobs.Job, error) {
	defer f.disarm()
	defer f.s.InterruptWhen(f.ctx)()
	f.lines = &Lines{W: OutputWriter(os.Stderr, f.cancel), Raw: os.Stderr, Shared: stdSame}
	feed := wire.Feed{Stdout: f.writer(0, OutputWriter(os.Stdout, f.cancel)), Stderr: f.writer(1, f.lines),
		Waiting: func(q jobs.Queue) {
			f.said = true
			f.announce("waits for queue %s (%d/%d running)", q.Name, q.Running, q.MaxRunning)
		},
		Paused: func(queue string) {
			f.said = true
			f.announce("waits: queue %s is paused", queue)
		},
		Stalled: f.stalled,
		Event:   f.event}
	for {
		j, done, err := f.s.Next(feed)
		switch {
		case done:
			return j, nil
		case f.ctx.Err() != nil:
			return jobs.Job{}, f.ctx.Err()
		case f.remote:
			return jobs.Job{}, wire.ErrHandover
		case err != nil:
			return jobs.Job{}, err
		}
	}
}

// end is run's exit once its job is followed to j (or err).
func (f *follower) end(j jobs.Job, err error) int {
	switch {
	case errors.Is(context.Cause(f.ctx), errTimedOut):
		switch {
		case f.over || err == nil && j.State.Finished():
		case errors.Is(context.Cause(f.ctx), errOverdue):
			f.notice("job %s goes on after SIGTERM; its worker kills it once its stop-timeout is over, and it ends dead, timed out", f.name)
		default:
			f.stop()
		}
		f.notice("error: job %s: an attempt ran out of its %v", f.name, f.tout)
		return 124
	case err != nil && f.ctx.Err() != nil:
		f.stop()
		return f.exit()
	case OutputGone(context.Cause(f.ctx)):
		return f.exit() // the job ended, but not all its output was written
	case errors.Is(err, wire.ErrHandover):
		f.s.Close()
		f.res.Open, f.res.Said = f.lines.Left(), f.said
		return Full(f.c.args, &f.res)
	case err != nil:
		f.notice("error: %v", err)
		return 1
	}
	switch {
	case j.State == jobs.Completed:
		return 0
	case j.State == jobs.Dead:
		f.s.Close()
		f.res.Open, f.res.Said = f.lines.Left(), f.said
		return Full(f.c.args, &f.res) // says why it died, and exits as it did
	}
	f.notice("error: job %s was %s", f.name, j.State)
	return 1
}

// exit is run's end when its follow was interrupted (Exit).
func (f *follower) exit() int {
	code, sig, err := Exit(context.Cause(f.ctx))
	if err != nil {
		f.notice("error: %v", err)
	}
	if sig != 0 {
		Die(sig)
	}
	return code
}

// event announces a run's start and end, and keeps a timer on the running
// attempt, as the full program's follower does.
func (f *follower) event(e wire.Event) {
	f.disarm()
	if f.remote {
		return
	}
	a := e.Run.Attempt
	if !e.Ended {
		if e.Run.Host != jobs.HostID() {
			f.remote = true // its output shows when it ends: the full program follows it
			f.s.Interrupt()
			return
		}
		f.res.Started = append(f.res.Started, a)
		if Told(e.Run, f.said) {
			f.announce("%s of %d started", Attempt(e.Job, e.Run), e.Job.MaxRetries)
		}
		if f.tout > 0 {
			cause := errTimedOut
			if e.Run.Attempt >= e.Job.MaxRetries { // max_retries counts every run
				cause = errOverdue
			}
			f.timer = time.AfterFunc(time.Until(e.Run.StartedAt.Add(f.tout+TimeoutGrace)), func() { f.cancel(cause) })
		}
		return
	}
	f.res.Ended = append(f.res.Ended, a)
	switch e.Run.Outcome {
	case jobs.OutcomeFailed:
		timedOut := f.tout > 0 && e.Run.EndedAt.Sub(e.Run.StartedAt) >= f.tout
		if timedOut {
			f.cancel(errTimedOut)
		}
		switch {
		case e.Job.State == jobs.Dead:
			f.over = true // nothing left to cancel
			f.announce("%s failed (%s); no attempts left", Attempt(e.Job, e.Run), e.Run.Error)
		case timedOut:
			f.announce("%s failed (%s); run cancels the job: an attempt that runs out of --timeout is its last", Attempt(e.Job, e.Run), e.Run.Error)
		case e.Job.State == jobs.Failed:
			wait := max(time.Until(e.Job.RunAfter).Round(time.Second), 0)
			f.announce("%s failed (%s); next attempt in %v", Attempt(e.Job, e.Run), e.Run.Error, wait)
		default:
			f.announce("%s failed (%s)", Attempt(e.Job, e.Run), e.Run.Error)
		}
	case jobs.OutcomeLost:
		f.announce("run %d was lost with its worker; it runs again as the same attempt", a)
	case jobs.OutcomeInterrupted:
		if e.Run.NeverRan() {
			f.announce("run %d did not start (%s); it runs again as the same attempt", e.Run.Attempt, e.Run.Error)
			return
		}
		f.announce("run %d was interrupted (%s); it runs again as the same attempt", a, e.Run.Error)
	}
}

func (f *follower) disarm() {
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
}

// notice writes one of run's lines on stderr, on a line of its own.
func (f *follower) notice(format string, a ...any) {
	f.lines.Break()
	fmt.Fprintf(os.Stderr, "queuectl: "+format+"\n", a...)
}

// stalled warns, as the full program does, that the job cannot move for
// a while (wire.Stall).
func (f *follower) stalled(st wire.Stall) {
	f.said = true
	if f.c.quiet {
		return
	}
	f.notice("warning: job %s %s", f.name, st.Why)
	if st.Hint != "" {
		f.notice("hint: %s", st.Hint)
	}
}

func (f *follower) announce(format string, a ...any) {
	if !f.c.quiet {
		f.notice("job %s: "+format, append([]any{f.name}, a...)...)
	}
}

// stop cancels the job through its worker, and writes what comes until
// the job's end, for stopWait at most.
func (f *follower) stop() {
	f.s.Resume(stopWait)
	err := f.s.Cancel()
	// Output that cannot be written (what stopped it) is dropped.
	drop := func(error) {}
	feed := wire.Feed{Stdout: f.writer(0, OutputWriter(os.Stdout, drop)), Stderr: f.writer(1, OutputWriter(os.Stderr, drop)),
		Waiting: func(jobs.Queue) {}, Paused: func(string) {}, Stalled: func(wire.Stall) {}, Event: func(wire.Event) {}}
	for err == nil {
		var done bool
		if _, done, err = f.s.Next(feed); done {
			return
		}
	}
	if errors.Is(err, wire.ErrHandover) && errors.Is(err, os.ErrDeadlineExceeded) {
		f.notice("job %s is canceled; its worker is still stopping its processes", f.name)
		return
	}
	f.notice("job %s: cancel: %v", f.name, err)
}

// writer writes a stream of the running attempt, and counts what it wrote
// for a Resume.
func (f *follower) writer(stream int, w io.Writer) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		n, err := w.Write(p)
		if stream == 0 {
			f.lines.Out(p[:n])
		}
		attempt := 0
		if k := len(f.res.Started); k > 0 {
			attempt = f.res.Started[k-1]
		}
		f.res.Wrote = addWrote(f.res.Wrote, attempt, stream, n)
		return n, err
	})
}

func addWrote(w [][3]int64, attempt, stream, n int) [][3]int64 {
	for i := range w {
		if w[i][0] == int64(attempt) && w[i][1] == int64(stream) {
			w[i][2] += int64(n)
			return w
		}
	}
	return append(w, [3]int64{int64(attempt), int64(stream), int64(n)})
}

type writerFunc func([]byte) (int, error)

func (w writerFunc) Write(p []byte) (int, error) { return w(p) }

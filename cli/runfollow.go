package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/front"
	"github.com/queuectl/queuectl/handoff"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/urfave/cli/v2"
)

// errAttemptTimedOut ends a follow when an attempt outlives --timeout.
var errAttemptTimedOut = errors.New("attempt timed out")

// errOverdue ends a follow when the job's last attempt outlives --timeout
// by front.TimeoutGrace: run leaves it to its worker, as the front does
// (front.errOverdue).
var errOverdue = fmt.Errorf("%w, and goes on after SIGTERM", errAttemptTimedOut)

// timeoutCause is the cause of the follow's end when attempt r of job j
// outlives --timeout by front.TimeoutGrace.
func timeoutCause(j claim.Job, r claim.Run) error {
	if r.Attempt >= j.MaxRetries { // max_retries counts every run
		return errOverdue
	}
	return errAttemptTimedOut
}

// follower streams one job's runs to the caller, announces each attempt
// on stderr, and watches --timeout. It follows the job on its worker's
// connection (stream), or in the store (h); when the worker stops
// following, it goes on in the store, without writing again what it wrote.
type follower struct {
	c       *cli.Context
	h       *home
	stream  *handoff.Stream
	id      string
	name    string // id, with the job's label (front.Named)
	own     bool   // the job is this run's, not one holding the same unique key
	timeout time.Duration

	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	seen   seen
	lines  *front.Lines // the job's stderr, for a notice after an open line
	waits  runWaits     // what was said of the job's waiting, on the worker's connection or here
	said   bool         // why the job waits was said: its start is told (front.Told)
	over   bool         // an event said that the job is finished

	unserved   bool      // that no live worker serves the job's queue was said
	servedLook time.Time // when the workers were last looked at (lookServed)
}

func newFollower(c *cli.Context, r claim.Result) *follower {
	own := r.Outcome == claim.Created
	if !own {
		logf(c)("job %s holds unique key %q and is %s: following it", r.Job.ID, r.Job.UniqueKey, r.Job.State)
	}
	f := &follower{c: c, id: r.Job.ID, name: front.Named(r.Job.ID, r.Job.Label), own: own, said: !own, timeout: r.Job.Timeout, seen: newSeen(),
		lines: &front.Lines{Raw: c.App.ErrWriter,
			Shared: func() bool { return front.SameFile(c.App.Writer, c.App.ErrWriter) }}}
	f.waits = runWaits{waiting: f.waiting, paused: f.paused, stalled: f.stalled}
	return f
}

func (f *follower) follow() (claim.Job, error) {
	f.ctx, f.cancel = context.WithCancelCause(f.c.Context)
	defer f.cancel(nil)
	defer f.disarm()
	stdout := f.seen.writer(0, linesOut{f.lines, front.OutputWriter(f.c.App.Writer, f.cancel)})
	f.lines.W = front.OutputWriter(f.c.App.ErrWriter, f.cancel) // this follow's: it cancels this f.ctx
	stderr := f.seen.writer(1, f.lines)
	if f.stream != nil {
		return f.followStream(stdout, stderr)
	}
	t := &run.Tail{Store: f.h.store, Stdout: stdout, Stderr: stderr,
		Every: 50 * time.Millisecond, Poll: min(f.h.config.PollInterval, 200*time.Millisecond), Event: f.event,
		Look:       func(j claim.Job) { f.waits.look(f.ctx, f.h, j); f.lookServed(j) },
		Reach:      reach(f.announce, "the job goes on, and run follows it again once the store is back"),
		Unrecorded: func(u run.Unrecorded, lost int64) { unrecordedStall(u, lost, f.stalled) },
		Lost:       func(lost int64) { lostStall(lost, f.stalled) }}
	return t.Follow(f.ctx, f.id)
}

// lookServed says, once, that no live worker serves the job's queue while
// the job waits to start, or runs in a worker that is gone: nothing starts
// it, or takes its run back, until one does. run says so as it begins
// (checkWorkers); a worker killed since is news that no event brings. It
// looks at most every workerCheck, as wait does, and says it again after
// a worker served the queue in between. Like checkWorkers, it says so
// under -q too: a quiet run must not wait for ever without a word.
func (f *follower) lookServed(j claim.Job) {
	if j.State != claim.Pending && j.State != claim.Failed && j.State != claim.Processing ||
		time.Since(f.servedLook) < workerCheck {
		return
	}
	f.servedLook = time.Now()
	starting := run.WorkerStarting(f.h.dir) // asked before the registry is read, as checkWorkers does
	live, err := liveWorkers(f.ctx, f.h)
	queue := cmp.Or(j.Queue, claim.DefaultQueue)
	switch {
	case err != nil: // no answer: the follow itself meets the store's error
		return
	case starting || served(queue, live):
		f.unserved = false
		return
	case f.unserved:
		return
	case j.State == claim.Processing:
		if slices.ContainsFunc(live, func(w claim.WorkerInfo) bool { return w.ID == j.WorkerID }) {
			return // its worker runs it
		}
		f.notice("warning: the worker running job %s is gone, and no live worker serves queue %s; it runs again once one does", f.name, queue)
	default:
		f.notice("warning: no live worker serves queue %s; job %s waits until one does", queue, f.name)
	}
	f.unserved, f.said = true, true
	f.notice("hint: queuectl worker start --queue %s", queue)
}

func (f *follower) waiting(q claim.Queue) {
	f.said = true
	f.announce("waits for queue %s (%d/%d running)", q.Name, q.Running, q.MaxRunning)
}

func (f *follower) paused(queue string) {
	f.said = true
	f.announce("waits: queue %s is paused", queue)
}

// stalled warns, as wait does, that the job cannot move for a while.
func (f *follower) stalled(st handoff.Stall) {
	f.said = true
	if f.c.Bool("quiet") {
		return
	}
	f.notice("warning: job %s %s", f.name, st.Why)
	if st.Hint != "" {
		f.notice("hint: %s", st.Hint)
	}
}

func (f *follower) cause() error { return context.Cause(f.ctx) }

// event announces a run's start and end, and keeps a timer on the running
// attempt. An attempt that failed after running its whole --timeout was
// killed by its worker for it.
func (f *follower) event(e run.TailEvent) {
	f.disarm()
	if f.seen.event(e.Run.Attempt, e.Ended) {
		// Told already, by the worker that stopped following: only the timer.
		if !e.Ended && f.timeout > 0 {
			cause := timeoutCause(e.Job, e.Run)
			f.timer = time.AfterFunc(time.Until(e.Run.StartedAt.Add(f.timeout+front.TimeoutGrace)), func() { f.cancel(cause) })
		}
		return
	}
	if !e.Ended {
		if e.Run.Host != run.HostID() {
			f.announce("%s of %d started on %s: its output shows when it ends (the last %s of each stream)",
				front.Attempt(e.Job, e.Run), e.Job.MaxRetries, e.Run.HostName(), report.Bytes(claim.TailBytes))
		} else if front.Told(e.Run, f.said) {
			f.announce("%s of %d started", front.Attempt(e.Job, e.Run), e.Job.MaxRetries)
		}
		if f.timeout > 0 {
			cause := timeoutCause(e.Job, e.Run)
			f.timer = time.AfterFunc(time.Until(e.Run.StartedAt.Add(f.timeout+front.TimeoutGrace)), func() { f.cancel(cause) })
		}
		return
	}
	f.cut(e.Run)
	switch e.Run.Outcome {
	case claim.OutcomeFailed:
		timedOut := f.timeout > 0 && e.Run.EndedAt.Sub(e.Run.StartedAt) >= f.timeout
		if timedOut {
			f.cancel(errAttemptTimedOut)
		}
		switch {
		case e.Job.State == claim.Dead:
			f.over = true // nothing left to cancel
			f.announce("%s failed (%s); no attempts left", front.Attempt(e.Job, e.Run), e.Run.Error)
		case timedOut && f.own:
			f.announce("%s failed (%s); run cancels the job: an attempt that runs out of --timeout is its last", front.Attempt(e.Job, e.Run), e.Run.Error)
		case e.Job.State == claim.Failed:
			wait := max(time.Until(e.Job.RunAfter).Round(time.Second), 0)
			f.announce("%s failed (%s); next attempt in %v", front.Attempt(e.Job, e.Run), e.Run.Error, wait)
		case e.Job.State == claim.Pending, e.Job.State == claim.Processing:
			// Read after its next attempt was due: it runs again, or already does.
			f.announce("%s failed (%s); it runs again", front.Attempt(e.Job, e.Run), e.Run.Error)
		default:
			f.announce("%s failed (%s)", front.Attempt(e.Job, e.Run), e.Run.Error)
		}
	case claim.OutcomeLost:
		f.announce("run %d was lost with its worker; it runs again as the same attempt", e.Run.Attempt)
	case claim.OutcomeInterrupted:
		if e.Run.NeverRan() {
			f.announce("run %d did not start (%s); it runs again as the same attempt", e.Run.Attempt, e.Run.Error)
			return
		}
		f.announce("run %d was interrupted (%s); it runs again as the same attempt", e.Run.Attempt, e.Run.Error)
	}
}

// cut says of an ended run of another host each stream that wrote more
// than the store keeps: only its end was written here, just before, and
// the rest is in its file on that host (as logs says it).
func (f *follower) cut(r claim.Run) {
	if r.Host == run.HostID() || r.Tails == nil {
		return
	}
	for _, lg := range []run.Log{{Run: r}, {Run: r, Stderr: true}} {
		if kept := lg.Kept(); kept.Truncated() {
			f.announce("attempt %d on %s: printed the last %s of %s of its %s, kept with the run; the full log is %s",
				r.Attempt, r.HostName(), report.Bytes(claim.TailBytes), report.Bytes(kept.Size), lg.Name(), lg.Where())
		}
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
		f.notice("job %s: "+format, append([]any{f.name}, a...)...)
	}
}

// notice writes one of run's lines on stderr, on a line of its own.
func (f *follower) notice(format string, a ...any) {
	f.lines.Break()
	logf(f.c)(format, a...)
}

// stopWait bounds how long run waits, once interrupted or timed out, for
// its job's worker to stop the job's processes.
const stopWait = 5 * time.Second

// stop cancels the job, outside the command's ended context, and waits a
// little for its processes to be stopped.
func (f *follower) stop() {
	if f.stream != nil {
		f.stopStream()
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(f.c.Context), stopWait)
	defer cancel()
	_, _, _, err := f.h.store.Cancel(ctx, f.id)
	if errors.Is(err, claim.ErrConflict) {
		return // it finished meanwhile
	}
	if err == nil {
		_, err = f.h.store.Wait(ctx, []string{f.id}, f.h.config.PollInterval)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		f.notice("job %s is canceled; its worker is still stopping its processes", f.name)
	case errors.Is(err, claim.ErrUnavailable):
		f.notice("job %s goes on: the store is unreachable, so it could not be canceled (%v); once it is back: queuectl cancel %s", f.name, err, f.id)
	case err != nil:
		f.notice("job %s: cancel: %v", f.name, err)
	}
}

// finished reports whether a job is done for good: completed, dead or
// canceled.
func finished(s claim.State) bool { return s.Finished() }

// linesOut writes the job's stdout, and tells lines of it.
type linesOut struct {
	lines *front.Lines
	w     io.Writer
}

func (o linesOut) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	o.lines.Out(p[:n])
	return n, err
}

package run

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// succeeded tells how a run that exited 0 ended once stored: completed,
// with its on_success hook, or canceled when a cancel came while it ran
// (the store lets the cancel win), with no hook and its dependents ended.
func (w *Worker) succeeded(ctx, hard context.Context, j claim.Job, r claim.Run, res result, next claim.State) {
	if next == claim.Canceled {
		w.emit(Event{Kind: EventCanceled, Job: j.ID, Run: r.Attempt, ExitCode: res.exitCode, Duration: res.took})
		w.endDependents(ctx, hard, j.ID, next)
		return
	}
	w.ended(j, r, res, claim.Completed)
	code := res.exitCode
	if code == nil {
		code = new(int)
	}
	w.fireHooks(hard, hookEvent{job: j, run: r, state: claim.Completed, exitCode: code},
		w.hooksFor(j, claim.Completed, false))
}

// ended tells Events how a run ended, once its end is stored.
func (w *Worker) ended(j claim.Job, r claim.Run, res result, next claim.State) {
	e := Event{Kind: EventCompleted, Job: j.ID, Run: r.Attempt, Attempt: j.Attempts, MaxRetries: j.MaxRetries,
		ExitCode: res.exitCode, Duration: res.took, Err: res.err}
	switch next {
	case claim.Failed:
		e.Kind = EventFailed
		// The store's run_after is set from its own clock; this is the same
		// backoff from ours, for the log line.
		e.RetryAt = time.Now().Add(claim.Backoff(j.BackoffBase, j.Attempts, w.settings().MaxBackoff))
	case claim.Dead:
		e.Kind = EventDead
	}
	w.emit(e)
}

// endDependents makes dead the jobs waiting for id, which ended in state,
// and gives each its dead/ file and on_dead hook (which hard ends).
func (w *Worker) endDependents(ctx, hard context.Context, id string, state claim.State) {
	ended, err := w.Store.EndDependents(ctx, id, state)
	if err != nil {
		w.logf("job %s ended %s, but the jobs waiting for it: %v", id, state, err)
	}
	w.diedOfDependency(ctx, hard, ended)
}

// diedOfDependency reports jobs made dead by a dependency's end.
func (w *Worker) diedOfDependency(ctx, hard context.Context, ended []claim.Job) {
	for _, j := range ended {
		w.emit(Event{Kind: EventDead, Job: j.ID, Run: j.Runs, Attempt: j.Attempts, Err: j.LastError})
		if w.OnDead != nil {
			w.OnDead(ctx, j)
		}
		w.fireHooks(hard, hookEvent{job: j, run: claim.Run{JobID: j.ID, Attempt: j.Runs}, state: claim.Dead, err: j.LastError},
			w.hooksFor(j, claim.Dead, false))
	}
}

// dead hands a job that just died to OnDead.
func (w *Worker) dead(ctx context.Context, id string) {
	if w.OnDead == nil {
		return
	}
	j, err := w.Store.Get(ctx, id)
	if err != nil {
		w.logf("job %s died: %v", id, err)
		return
	}
	w.OnDead(ctx, j)
}

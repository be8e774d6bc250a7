package run

import (
	"context"
	"errors"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// schedule fires due schedules until ctx ends: at start-up (so a due time
// missed while no worker ran fires once, now), then at each next due time,
// looking again at least every poll interval for schedules added, changed
// or resumed meanwhile. Every worker does this; the store makes each due
// time one job, whichever worker gets there first.
func (w *Worker) schedule(ctx context.Context, stop context.CancelFunc) {
	for {
		fired, next, err := w.Store.FireDue(ctx)
		switch {
		case errors.Is(err, claim.ErrReplaced):
			w.fail(err, stop)
			return
		case err != nil && ctx.Err() == nil:
			w.logf("schedules: %v", err)
		}
		for _, f := range fired {
			w.sayFired(f)
		}
		wait := w.Config.PollInterval
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(w.Store.Now()), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (w *Worker) sayFired(f claim.Fired) {
	due := f.Due.Local().Format("2006-01-02 15:04 MST")
	switch {
	case f.Err != nil:
		w.logf("schedule %s: due %s, no job: %v", f.Schedule, due, f.Err)
	case f.Outcome == claim.Skipped:
		w.logf("schedule %s: due %s, skipped: job %s from an earlier due time is still %s", f.Schedule, due, f.Job.ID, f.Job.State)
	default:
		w.logf("schedule %s: due %s, enqueued job %s", f.Schedule, due, f.Job.ID)
	}
}

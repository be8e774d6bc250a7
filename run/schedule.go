package run

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// schedule fires due schedules until ctx ends: at start-up (so a due time
// missed while no worker ran fires once, now), then at each next due time,
// looking again at least every poll interval for schedules added, changed
// or resumed meanwhile. Every worker does this; the store makes each due
// time one job, whichever worker gets there first.
func (w *Worker) schedule(ctx context.Context, stop context.CancelFunc) {
	var said string // a schedule that cannot fire is said once, not at every look
	for {
		fired, next, err := w.Store.FireDue(ctx)
		switch {
		case claim.Unusable(err):
			w.fail(err, stop)
			return
		case err == nil:
			said = ""
		case ctx.Err() == nil && !w.storeDown(err) && !w.diskFull(err) && err.Error() != said:
			w.logf("schedules: %v", err)
			said = err.Error()
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
	e := Event{Kind: EventScheduled, Schedule: f.Schedule, Due: f.Due, Job: f.Job.ID}
	switch {
	case f.Err != nil:
		e.Err = f.Err.Error()
	case f.Outcome == claim.Skipped:
		e.Kind = EventSkipped
	}
	w.emit(e)
}

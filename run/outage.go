package run

import (
	"context"
	"errors"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A store that goes away (a PostgreSQL server restarted, a network cut)
// is an outage, not a stream of errors: the worker says once that the
// store is unreachable and once that it is back. Meanwhile its running
// jobs go on, its slots claim nothing and wait for the store's return
// (the heartbeat, the reaper and the listener keep trying, each at its own
// pace, so a worker never spins), and results wait to be recorded. If the
// outage outlasts the lease, the runs are stopped before any other host
// may take them for lost (fence): they run again once the store is back.

// storeDown reports whether err means that the store cannot be reached (or
// refuses this worker); the first such error of an outage is said (Reach).
// Any other error is no outage, and no news of the store's return either.
func (w *Worker) storeDown(err error) bool {
	return errors.Is(err, claim.ErrUnavailable) && w.reach.Unreachable(err)
}

// storeUp notes that the store answered, a write included; the end of an
// outage is said.
func (w *Worker) storeUp() { w.reach.Answered() }

// storeRead notes that the store answered a read: the end of an outage,
// unless it was the store's refusal of writes (Reach.AnsweredRead).
func (w *Worker) storeRead() { w.reach.AnsweredRead() }

// storeBack returns a channel closed when the store is reachable again,
// or nil when it is reachable now.
func (w *Worker) storeBack() <-chan struct{} { return w.reach.returned() }

// sayReach makes the worker's Reach say an outage and its end as events.
// Its end is said once the store has answered for a heartbeat interval and
// a second: a renewal sent as the store came back has failed by then if it
// was to fail (renew), and that is the same outage going on.
func (w *Worker) sayReach() {
	w.reach.Settle = w.Config.HeartbeatInterval + reachRetryMost
	w.reach.Lost = func(err error) { w.emit(Event{Kind: EventUnreachable, Err: err.Error()}) }
	w.reach.Back = func(away time.Duration) { w.emit(Event{Kind: EventReachable, Duration: away}) }
}

// awaitStore waits, while the store is unreachable, until it is back, at
// most limit, or ctx ends.
func (w *Worker) awaitStore(ctx context.Context, limit time.Duration) {
	back := w.storeBack()
	if back == nil {
		return
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-back:
	case <-t.C:
	case <-ctx.Done():
	}
}

// storeRetry bounds how long a slot waits for the store's return before it
// tries again itself.
const storeRetry = 5 * time.Second

// giveBack recovers a run this worker stopped because its lease lapsed, as
// a reaper would, once the store is back: the job runs again without the
// run counting as an attempt. A reaper that got there first (ErrLost) did
// the same. It gives up on a hard stop: a reaper recovers the run then.
func (w *Worker) giveBack(hard context.Context, r claim.Run) {
	f := claim.InFlight{Run: r}
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, storeRetry) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(hard), 30*time.Second)
		if r.PGID > 0 {
			// Its start, which its end would have recorded (a recovery
			// keeps none); should this fail, so does the recovery.
			w.Store.Started(ctx, r, r.PGID)
		}
		next, err := w.Store.Recover(ctx, f)
		if err == nil {
			w.storeUp()
			w.recovered(ctx, hard, f, next)
		}
		cancel()
		switch {
		case err == nil, errors.Is(err, claim.ErrLost):
			return
		case claim.Unusable(err), hard.Err() != nil:
			return
		case w.storeDown(err):
			w.awaitStore(hard, wait)
		default:
			if !w.diskFull(err) {
				w.logf("job %s: give back run %d: %v; trying again in %v", r.JobID, r.Attempt, err, wait)
			}
			select {
			case <-hard.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

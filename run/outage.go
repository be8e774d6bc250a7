package run

import (
	"context"
	"errors"
	"sync"
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

// outage is whether the store is reachable, as the worker last found it.
type outage struct {
	mu    sync.Mutex
	since time.Time     // zero: reachable
	back  chan struct{} // closed when the store is reachable again
}

// storeDown reports whether err means that the store cannot be reached (or
// refuses this worker); the first such error of an outage is said.
func (w *Worker) storeDown(err error) bool {
	if !errors.Is(err, claim.ErrUnavailable) {
		return false
	}
	o := &w.outage
	o.mu.Lock()
	first := o.since.IsZero()
	if first {
		o.since, o.back = time.Now(), make(chan struct{})
	}
	o.mu.Unlock()
	if first {
		w.emit(Event{Kind: EventUnreachable, Err: err.Error()})
	}
	return true
}

// storeUp notes that the store answered; the end of an outage is said.
func (w *Worker) storeUp() {
	o := &w.outage
	o.mu.Lock()
	since := o.since
	if !since.IsZero() {
		close(o.back)
		o.since, o.back = time.Time{}, nil
	}
	o.mu.Unlock()
	if !since.IsZero() {
		w.emit(Event{Kind: EventReachable, Duration: time.Since(since)})
	}
}

// storeBack returns a channel closed when the store is reachable again,
// or nil when it is reachable now.
func (w *Worker) storeBack() <-chan struct{} {
	o := &w.outage
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.back
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
			w.recovered(ctx, f, next)
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
			w.logf("job %s: give back run %d: %v; trying again in %v", r.JobID, r.Attempt, err, wait)
			select {
			case <-hard.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

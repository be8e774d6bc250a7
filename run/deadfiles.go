package run

import (
	"context"
	"time"
)

// keepDead keeps the home's dead/ in step with the store while the worker
// runs (SyncDead), for a store other hosts share: a job that dies on
// another host, or that another host re-drives, changes the set of dead
// jobs here too, and `ls dead/` must not show a stale set until this
// worker restarts. It syncs after a change to the store (a wake-up),
// at most once a heartbeat interval, so that a busy fleet costs each host
// one listing of the dead jobs an interval at most.
func (w *Worker) keepDead(ctx context.Context, changes <-chan struct{}) {
	var said string
	sync := func() {
		err := w.SyncDead(ctx)
		switch {
		// A store away is an outage, said once for the worker (storeDown).
		case err != nil && ctx.Err() == nil && !w.storeDown(err) && err.Error() != said:
			said = err.Error()
			w.logf("dead/: %v", err)
		case err == nil:
			said = ""
		}
	}
	var due <-chan time.Time // a sync owed for changes since the last one
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-changes:
			if !ok {
				return
			}
			if due == nil {
				due = time.After(time.Until(last.Add(w.settings().HeartbeatInterval)))
			}
		case <-due:
			due, last = nil, time.Now()
			sync()
		}
	}
}

package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// faultRetry is how long a job that could not start for a cause outside it
// waits before it is tried again.
const faultRetry = 5 * time.Second

func (w *Worker) faultWait() time.Duration {
	if w.faultRetry > 0 {
		return w.faultRetry
	}
	return faultRetry
}

// logsBack reports whether logs/ can be written again, after a run could
// not keep its output there. Until it can, it waits faultWait (or the soft
// stop) and the slot claims nothing: a job claimed meanwhile could only be
// put back, each time leaving one more run record of a run that never ran.
func (w *Worker) logsBack(soft context.Context) bool {
	if checkLogs(w.LogDir) == nil {
		w.logsDown.Store(false)
		w.fullLogs.room(w)
		return true
	}
	select {
	case <-soft.Done():
	case <-time.After(w.faultWait()):
	}
	return false
}

// postpone puts back a job that could not start for a cause outside it, to
// be tried again after faultRetry (w.faultRetry in tests), without counting
// the attempt, and says what and where.
func (w *Worker) postpone(hard context.Context, j claim.Job, r claim.Run, fault string) {
	wait := w.faultWait()
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(hard), 30*time.Second)
		err := w.Store.Postpone(ctx, r, fault, w.Store.Now().Add(wait))
		cancel()
		switch {
		case err == nil:
			w.emit(Event{Kind: EventWarning, Job: j.ID, Run: r.Attempt, Err: fmt.Sprintf(
				"job %s not run: %s; not counted as an attempt, trying again in %v", j.ID, fault, wait)})
			return
		case errors.Is(err, claim.ErrLost) || claim.Unusable(err) || hard.Err() != nil:
			return
		}
		if !w.diskFull(err) {
			w.logf("job %s: put back after %s: %v; trying again in %v", j.ID, fault, err, delay)
		}
		select {
		case <-hard.Done():
			return
		case <-time.After(delay):
		}
	}
}

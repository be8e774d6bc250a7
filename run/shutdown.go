package run

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// sayStopping notes that the worker is stopping (a registration a renewal
// puts back says so), and tells the person at the terminal what a first
// stop means.
func (w *Worker) sayStopping(soft, hard context.Context) {
	<-soft.Done()
	w.stopping.Store(true)
	n, h := w.running.Load(), w.hooksRunning.Load()
	if n+h > 0 && hard.Err() == nil {
		w.emit(Event{Kind: EventStopping, Slots: int(n), Hooks: int(h)})
	}
}

// sayHardStopping tells the person at the terminal, a second after the
// second signal, of the jobs that go on after their SIGTERM: they are
// killed only at the stop-timeout, 30 s by default, and another signal
// changes nothing meanwhile. It ends with watching (the last slot done).
func (w *Worker) sayHardStopping(watching, hard context.Context) {
	select {
	case <-hard.Done():
	case <-watching.Done():
		return
	}
	grace := w.settings().StopTimeout
	if grace <= time.Second {
		return
	}
	select {
	case <-time.After(time.Second):
	case <-watching.Done():
		return
	}
	if n := w.running.Load(); n > 0 {
		w.emit(Event{Kind: EventWarning, Err: fmt.Sprintf("stopping: %d running job(s) go on after SIGTERM; killed %v after it", n, grace)})
	}
}

// fail stops the worker gracefully for a reason that no retry mends: the
// database it writes to was deleted or replaced. Run returns err. It says
// so at once: running jobs finish first, which may take hours.
func (w *Worker) fail(err error, stop context.CancelFunc) {
	w.failOnce.Do(func() {
		w.failed = err
		if n := w.running.Load(); n > 0 {
			w.logf("%v; stopping once the %d running job(s) end", err, n)
		}
	})
	stop()
}

// reapLeftBehind reaps, while the worker runs, the processes its jobs left
// behind that came back to it as their subreaper. The function it returns
// stops what any run of this worker started and still runs, and reaps what
// has exited: nothing outlives the worker, and nothing waits for it later.
func (w *Worker) reapLeftBehind() (done func()) {
	reaping := make(chan struct{})
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-reaping:
				return
			case <-t.C:
				// One read of the main thread's children file, where the
				// kernel puts orphans; every thread's only when one came.
				if adoptedAny() {
					reapAdopted()
				}
			}
		}
	}()
	return func() {
		stop(leftovers(0, w.id+":", true, false), leftoverGrace)
		close(reaping)
		<-reaped
		for i := 0; i < 20 && adoptedAny(); i++ {
			reapAdopted()
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// background is the goroutines of a running worker besides its slots.
type background struct {
	changes, cancels <-chan struct{}
	unwatch          context.CancelFunc
	watchers, tasks  sync.WaitGroup
}

// startBackground starts the goroutines of a running worker besides its
// slots: those that end with soft (stop requests, the file check, wake-ups,
// the reaper, retention, removed jobs' logs, schedules), and those that go on until the last
// slot is done (cancels, heartbeat, fence), which wait ends.
func (w *Worker) startBackground(ctx, soft, hard context.Context, stop context.CancelFunc) (*background, error) {
	b := &background{}
	w.pruneNow = make(chan struct{}, 1)
	var err error
	if b.changes, err = w.Store.Changes(soft); err != nil {
		return nil, err
	}
	var deaths <-chan struct{} // for keepDead
	if w.SyncDead != nil {
		if deaths, err = w.Store.Changes(soft); err != nil {
			return nil, err
		}
	}
	// Cancels are watched until the last slot is done: a job still running
	// in a worker that is stopping can be canceled too.
	watching, unwatch := context.WithCancel(ctx)
	b.unwatch = unwatch
	if b.cancels, err = w.Store.Changes(watching); err != nil {
		unwatch()
		return nil, err
	}
	w.notePauses(ctx)
	b.watchers.Go(func() { w.watchCancels(watching, b.cancels) })
	// Leases are renewed until the last slot is done too: a job still
	// running in a stopping worker must not look lost to other hosts.
	b.watchers.Go(func() { w.heartbeat(watching, stop) })
	b.watchers.Go(func() { w.fence(watching) })
	b.watchers.Go(func() { w.sayHardStopping(watching, hard) })

	b.tasks.Go(func() { w.sayStopping(soft, hard) })
	b.tasks.Go(func() { w.watchFile(soft, stop) })
	b.tasks.Go(func() { w.dispatch(soft, stop, b.changes) })
	b.tasks.Go(func() { w.reap(soft, hard) })
	b.tasks.Go(func() { w.prune(soft) })
	b.tasks.Go(func() { w.keepRemovedLogs(soft) })
	b.tasks.Go(func() { w.schedule(soft, stop) })
	if deaths != nil {
		b.tasks.Go(func() {
			w.keepDead(soft, deaths)
			for range deaths { // closed once soft ends
			}
		})
	}
	return b, nil
}

// wait ends the goroutines that outlive soft and waits for every one,
// once the slots are done and soft has ended.
func (b *background) wait() {
	b.unwatch()
	b.watchers.Wait()
	b.tasks.Wait()
	// Store.Changes closes its channel as its goroutine ends: draining it
	// waits for that goroutine too.
	for range b.changes {
	}
	for range b.cancels {
	}
}

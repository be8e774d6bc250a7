package run

import (
	"context"
	"slices"
	"sync"
	"time"
)

// stopCheckInterval bounds how often a busy worker reads its stop flag:
// every finished job changes the store, and reading the flag on each change
// would cost a query per job. A stop request is seen at most this late.
const stopCheckInterval = 100 * time.Millisecond

// dispatch turns store changes into slot wake-ups, and stops the worker when
// `worker stop` asks.
func (w *Worker) dispatch(soft context.Context, stop context.CancelFunc, changes <-chan struct{}) {
	var checked time.Time
	var later <-chan time.Time // a check owed for changes since the last one
	check := func() {
		checked, later = time.Now(), nil
		if stopping, err := w.Store.StopRequested(soft, w.id); err == nil && stopping {
			stop()
		}
	}
	for {
		select {
		case _, ok := <-changes:
			if !ok {
				return
			}
			w.wake.fire()
			if since := time.Since(checked); since >= stopCheckInterval {
				check()
			} else if later == nil {
				later = time.After(stopCheckInterval - since)
			}
		case <-later:
			check()
		}
	}
}

// wakeup hands a store change to one idle slot, not to all of them. Most
// changes make at most one more job runnable (an enqueue, a retry come due,
// a run's end), and a slot that claims a job passes the wake-up on
// (claimed), so a burst of jobs still reaches every idle slot, one claim
// after another. Waking them all made each change cost a claim of every
// idle slot, all but one finding nothing: with 4 slots, 8 claims a job.
//
// A slot takes its channel before it looks for work (wait) and gives it
// back after (withdraw), so a change while it looks is not lost: the
// channel holds it, and the slot looks again.
type wakeup struct {
	mu      sync.Mutex
	waiting []chan struct{} // slots looking or idle, first come first woken
	owed    bool            // a wake-up came while no slot waited
}

func (u *wakeup) wait() chan struct{} {
	ch := make(chan struct{}, 1)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.owed {
		u.owed = false
		ch <- struct{}{}
		return ch
	}
	u.waiting = append(u.waiting, ch)
	return ch
}

// withdraw takes ch out of the waiting slots; a wake-up it holds is the
// caller's (it is about to look for work, or has found some).
func (u *wakeup) withdraw(ch chan struct{}) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.waiting = slices.DeleteFunc(u.waiting, func(c chan struct{}) bool { return c == ch })
}

// fire wakes the slot that has waited longest, or the next one to wait.
func (u *wakeup) fire() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.waiting) == 0 {
		u.owed = true
		return
	}
	ch := u.waiting[0]
	u.waiting = u.waiting[1:]
	ch <- struct{}{}
}

// fireAll wakes every waiting slot (the slot count changed).
func (u *wakeup) fireAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, ch := range u.waiting {
		ch <- struct{}{}
	}
	u.waiting = nil
}

// broadcast wakes every goroutine waiting on it. Waiters take the channel
// before they look at what they wait for, so a wake-up between looking and
// waiting is not lost.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func (b *broadcast) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

func (b *broadcast) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}

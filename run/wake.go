package run

import (
	"context"
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

// broadcast wakes every goroutine waiting on it. Waiters take the channel
// before they look for work, so a wake-up between looking and waiting is
// not lost.
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

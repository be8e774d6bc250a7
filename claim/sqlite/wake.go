package sqlite

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// The wake file lets one process tell others, without polling, that the
// queue changed: every commit that makes work for someone writes a byte to
// it, and waiters watch it with fsnotify. Missing a wake-up costs latency,
// never correctness: every waiter also polls at its poll interval.

func (e *Engine) wakePath() string { return e.path + "-wake" }

// notify writes to the wake file. Errors are ignored: see above. The file
// stays open for the next notify: a busy worker notifies once per job.
func (e *Engine) notify() {
	e.wake.mu.Lock()
	defer e.wake.mu.Unlock()
	if e.wake.f == nil {
		f, err := os.OpenFile(e.wakePath(), os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			return
		}
		e.wake.f = f
	}
	if _, err := e.wake.f.WriteAt([]byte{'.'}, 0); err != nil {
		e.wake.f.Close() // opened afresh next time
		e.wake.f = nil
	}
}

// wakeFile is the wake file as the store holds it open.
type wakeFile struct {
	mu sync.Mutex
	f  *os.File
}

func (w *wakeFile) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// Changes returns a channel that receives soon after any process commits a
// change to the queue (an enqueue, a finished run, a stop request). Sends
// coalesce: one receive may stand for many changes. The channel is closed
// when ctx ends; the watching goroutine is owned by ctx.
func (e *Engine) Changes(ctx context.Context) (<-chan struct{}, error) {
	f, err := os.OpenFile(e.wakePath(), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create wake file: %w", err)
	}
	f.Close()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch wake file: %w", err)
	}
	if err := w.Add(e.wakePath()); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch wake file: %w", err)
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				select {
				case out <- struct{}{}:
				default:
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return out, nil
}

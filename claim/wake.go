package claim

import (
	"context"
	"fmt"
	"os"

	"github.com/fsnotify/fsnotify"
)

// The wake file lets one process tell others, without polling, that the
// queue changed: every commit that makes work for someone writes a byte to
// it, and waiters watch it with fsnotify. Missing a wake-up costs latency,
// never correctness: every waiter also polls at its poll interval.

func (s *Store) wakePath() string { return s.path + "-wake" }

// notify writes to the wake file. Errors are ignored: see above.
func (s *Store) notify() {
	f, err := os.OpenFile(s.wakePath(), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	f.WriteAt([]byte{'.'}, 0)
	f.Close()
}

// Changes returns a channel that receives soon after any process commits a
// change to the queue (an enqueue, a finished run, a stop request). Sends
// coalesce: one receive may stand for many changes. The channel is closed
// when ctx ends; the watching goroutine is owned by ctx.
func (s *Store) Changes(ctx context.Context) (<-chan struct{}, error) {
	f, err := os.OpenFile(s.wakePath(), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create wake file: %w", err)
	}
	f.Close()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch wake file: %w", err)
	}
	if err := w.Add(s.wakePath()); err != nil {
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

package serve

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// readTimeout bounds one shared read of the store: a page never hangs on
// a locked database.
const readTimeout = 10 * time.Second

// staleFor is how old a shared value may be served while a fresher one is
// read in the background.
const staleFor = 10 * time.Second

// shared is a value read from the store that concurrent requests share, so
// that a hundred browsers and a Prometheus polling at once cost one read a
// second, not one each, and never queue behind each other's reads.
//
// A value read in the current second of the server's clock is served as
// it is. An older one, up to staleFor old, is served too, at once, while
// one request's read of a new one runs in the background (single-flight:
// the others do not start their own). Anything older, or nothing, waits
// for that read. So under load readers see the store as of the last read
// that finished, a second or two ago, and wait for the store only on the
// first request after a quiet spell. invalidate drops the value: the next
// reader waits for a fresh one.
type shared[T any] struct {
	now   func() time.Time
	load  func(context.Context) (T, error)
	group singleflight.Group
	loads atomic.Int64 // reads of the store, for tests

	mu  sync.Mutex
	gen uint64 // bumped by invalidate; a read started before it is not kept
	val T
	sec int64 // the clock's second the read of val started in
	ok  bool
}

func newShared[T any](now func() time.Time, load func(context.Context) (T, error)) *shared[T] {
	return &shared[T]{now: now, load: load}
}

// get returns the value, reading it first when it is missing or stale.
// The read runs detached from ctx, which bounds only this caller's wait:
// one client hanging up does not fail the others' read.
func (c *shared[T]) get(ctx context.Context) (T, error) {
	sec := c.now().Unix()
	c.mu.Lock()
	val, gen := c.val, c.gen
	fresh := c.ok && c.sec >= sec
	recent := c.ok && sec-c.sec <= int64(staleFor/time.Second)
	c.mu.Unlock()
	if fresh {
		return val, nil
	}
	done := c.group.DoChan(strconv.FormatUint(gen, 10), func() (any, error) { return c.refresh(gen, sec) })
	if recent {
		return val, nil
	}
	var zero T
	select {
	case r := <-done:
		if r.Err != nil {
			return zero, r.Err
		}
		return r.Val.(T), nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// refresh reads the value and keeps it unless invalidate came meanwhile.
// A caller that found no fresh value may reach it just after another
// read kept one (its flight over, so not shared): that one serves it.
func (c *shared[T]) refresh(gen uint64, sec int64) (any, error) {
	c.mu.Lock()
	if c.gen == gen && c.ok && c.sec >= sec {
		v := c.val
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	c.loads.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	v, err := c.load(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen == gen && (!c.ok || sec >= c.sec) {
		c.val, c.sec, c.ok = v, sec, true
	}
	c.mu.Unlock()
	return v, nil
}

// invalidate drops the value, after an action changed what it shows.
func (c *shared[T]) invalidate() {
	c.mu.Lock()
	c.gen++
	c.ok = false
	c.mu.Unlock()
}

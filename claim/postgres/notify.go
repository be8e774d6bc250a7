package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Wake-ups: every commit that makes work for someone calls pg_notify on the
// schema's channel in its transaction, so the notification goes out when,
// and only if, it commits. One connection per process LISTENs and fans each
// notification out to the Changes channels. Missing a wake-up costs
// latency, never correctness: every waiter also polls at its poll interval,
// and a listener that loses its connection reconnects, listens again and
// wakes everyone once, since changes made meanwhile went unheard.

// notifyQuery wakes the listeners when its transaction commits.
const notifyQuery = "SELECT pg_notify($1, '')"

// notify adds the wake-up to tx.
func (e *Engine) notify(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, notifyQuery, e.channel)
	return err
}

// listener is the process's one LISTENing connection and its subscribers.
type listener struct {
	config  *pgx.ConnConfig
	dsn     string // the config's, for the password of each connection (password)
	channel string

	mu      sync.Mutex
	lost    error     // why the last try to listen failed; nil while listening
	since   time.Time // when the tries began to fail
	subs    map[chan struct{}]struct{}
	cancel  context.CancelFunc // stops the listening goroutine; nil: not running
	done    chan struct{}      // closed when it has stopped
	stopped bool
}

// Changes returns a channel that receives soon after any process commits a
// change to the queue. The channel is closed when ctx ends.
func (e *Engine) Changes(ctx context.Context) (<-chan struct{}, error) {
	l := &e.listen
	out := make(chan struct{}, 1)
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		close(out)
		return out, nil
	}
	if l.subs == nil {
		l.subs = map[chan struct{}]struct{}{}
	}
	l.subs[out] = struct{}{}
	if l.cancel == nil {
		lctx, cancel := context.WithCancel(context.Background())
		l.cancel, l.done = cancel, make(chan struct{})
		go l.run(lctx)
	}
	l.mu.Unlock()
	go func() {
		<-ctx.Done()
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, ok := l.subs[out]; ok {
			delete(l.subs, out)
			close(out)
		}
	}()
	return out, nil
}

// run listens until ctx ends, reconnecting after a lost connection.
func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	wait := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		l.failed(err)
		if err == nil {
			wait = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// listen connects, LISTENs and relays notifications until the connection
// fails or ctx ends. It wakes every subscriber once listening, since what
// changed before went unheard.
func (l *listener) listen(ctx context.Context) error {
	l.config.Password = password(l.dsn, l.config.Password)
	conn, err := pgx.ConnectConfig(ctx, l.config)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.channel}.Sanitize()); err != nil {
		return err
	}
	l.failed(nil)
	l.wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		l.wake()
	}
}

// failed records why listening failed or stopped (err), or that it works
// (nil).
func (l *listener) failed(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.lost, l.since = nil, time.Time{}
	case l.lost == nil:
		l.lost, l.since = err, time.Now()
	default:
		l.lost = err
	}
}

// WakeUpsLost reports why the process cannot listen for wake-ups now,
// and since when (claim.Store.WakeUpsLost).
func (e *Engine) WakeUpsLost() (since time.Time, err error) {
	l := &e.listen
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		return time.Time{}, nil
	}
	return l.since, classify(fmt.Errorf("listen for wake-ups: %w", l.lost))
}

// wake sends to every subscriber that has no wake-up pending.
func (l *listener) wake() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// stop ends the listening goroutine, waits for it, and closes every
// subscriber's channel.
func (l *listener) stop() {
	l.mu.Lock()
	l.stopped = true
	cancel, done := l.cancel, l.done
	for ch := range l.subs {
		close(ch)
	}
	l.subs = nil
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

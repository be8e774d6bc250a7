package run

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Reach is whether the store answers, as the worker (outage.go) or a
// command that follows jobs from outside it (run, wait, logs -f, Tail)
// last found it. Both ride out an outage: the jobs run on meanwhile, so a
// store that cannot be reached for a while is no answer about them. Reach
// says once that the store is unreachable (Lost) and once that it is back
// (Back); meanwhile a follower tries again with a backoff (Due) until the
// store answers or its context ends, and the worker's loops wait for its
// return (returned). Safe for concurrent use.
//
// A store that comes back often stumbles once more: a pooled connection
// the restart broke, the first calls slow while every waiting result is
// written, a server that took a setting in some sessions before others.
// With Settle set, the return is said once the store has answered for
// Settle without failing again; a failure before then is the same outage
// going on, said neither lost nor back again. The loops go on at the
// first answer either way.
type Reach struct {
	// Lost is called with the first error of each outage; may be nil.
	Lost func(err error)
	// Back is called when the store answers again, with how long it did
	// not; may be nil.
	Back func(away time.Duration)
	// Settle is how long the store answers before its return is said
	// (zero: at once).
	Settle time.Duration

	mu       sync.Mutex
	since    time.Time     // zero: the store answers
	noWrites bool          // the outage's last error: the store answers, but takes no writes
	next     time.Time     // while it does not: when to try again
	wait     time.Duration // the backoff after the next failure
	back     chan struct{} // while it does not: closed when it answers again
	settling *settling     // the store answers again, its return not said yet
	flushed  bool          // Flush was called: a return is said at once
	saying   sync.Mutex    // held while a settled return is said (settled, Flush)
}

// settling is an outage's end waiting for its Settle.
type settling struct {
	since time.Time     // when the outage began
	away  time.Duration // how long it lasted, to the answer that ended it
	timer *time.Timer   // says it
}

// Backoff of a follower that cannot reach the store: the first retry soon
// (a connection reset by a restarting server is often back at once), then
// slower, up to about once a second, the pace of a worker's loops.
const (
	reachRetryFirst = 100 * time.Millisecond
	reachRetryMost  = time.Second
)

// Unreachable notes how a call to the store ended, and reports whether err
// says that the store cannot be reached (claim.ErrUnavailable): the caller
// tries again once Due. Any other outcome, nil included, is an answer,
// which ends an outage.
func (r *Reach) Unreachable(err error) bool {
	if !errors.Is(err, claim.ErrUnavailable) {
		r.Answered()
		return false
	}
	r.mu.Lock()
	first := r.since.IsZero()
	now := time.Now()
	if first {
		r.since, r.wait, r.back = now, reachRetryFirst, make(chan struct{})
		if s := r.settling; s != nil { // the outage goes on: its end was not said
			s.timer.Stop()
			r.since, r.settling, first = s.since, nil, false
		}
	}
	r.next = now.Add(r.wait)
	r.wait = min(2*r.wait, reachRetryMost)
	r.noWrites = errors.Is(err, claim.ErrReadOnly)
	r.mu.Unlock()
	if first && r.Lost != nil {
		r.Lost(err)
	}
	return true
}

// Answered notes that the store answered, which ends an outage: said now,
// or once it has answered for Settle.
func (r *Reach) Answered() {
	r.mu.Lock()
	since := r.since
	if since.IsZero() {
		r.mu.Unlock()
		return
	}
	close(r.back)
	r.since, r.wait, r.back, r.noWrites = time.Time{}, 0, nil, false
	away := time.Since(since)
	if r.Settle > 0 && !r.flushed {
		s := &settling{since: since, away: away}
		s.timer = time.AfterFunc(r.Settle, func() { r.settled(s) })
		r.settling = s
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	if r.Back != nil {
		r.Back(away)
	}
}

// settled says the return of s, unless the outage went on meanwhile or
// Flush said it.
func (r *Reach) settled(s *settling) {
	r.saying.Lock()
	defer r.saying.Unlock()
	r.mu.Lock()
	current := r.settling == s
	if current {
		r.settling = nil
	}
	r.mu.Unlock()
	if current && r.Back != nil {
		r.Back(s.away)
	}
}

// Flush says now a return waiting for its Settle, and any later one at
// once: the caller is about to say its own last words (a worker stopping),
// after which Reach says nothing. It returns once a return being said is.
func (r *Reach) Flush() {
	r.saying.Lock() // a timer that fired first finishes what it says
	defer r.saying.Unlock()
	r.mu.Lock()
	r.flushed = true
	s := r.settling
	r.settling = nil
	if s != nil {
		s.timer.Stop()
	}
	r.mu.Unlock()
	if s != nil && r.Back != nil {
		r.Back(s.away)
	}
}

// AnsweredRead notes that the store answered a read, which ends an outage
// unless the store refused writes (claim.ErrReadOnly): a server that takes
// no writes still answers reads, and its outage lasts until a write goes
// through. A worker whose reads end it would say it anew at each refused
// write, a pair of lines a second.
func (r *Reach) AnsweredRead() {
	r.mu.Lock()
	noWrites := r.noWrites
	r.mu.Unlock()
	if !noWrites {
		r.Answered()
	}
}

// Due reports whether to call the store now: always while it answers;
// while it does not, once the backoff since the last failure is over.
func (r *Reach) Due() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.since.IsZero() || !time.Now().Before(r.next)
}

// returned returns a channel closed when the store answers again, or nil
// (never ready) while it answers.
func (r *Reach) returned() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.back
}

// Riding returns done for a wait that polls it (claim.Store.WaitUntil,
// Follow): done is called only when Due, and a failure of it to reach the
// store, while ctx lasts, is not done yet rather than an error.
func (r *Reach) Riding(ctx context.Context, done func() (bool, error)) func() (bool, error) {
	return func() (bool, error) {
		if !r.Due() {
			return false, nil
		}
		ok, err := done()
		if ctx.Err() == nil && r.Unreachable(err) {
			return false, nil
		}
		return ok, err
	}
}

package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A follower's Reach says once that the store is unreachable, however many
// calls fail, and once that it is back; an error that is an answer (no
// such job) ends an outage too, and is no outage itself.
func TestReachSaysOnceEachWay(t *testing.T) {
	var lost, back []string
	r := &Reach{Lost: func(err error) { lost = append(lost, err.Error()) },
		Back: func(time.Duration) { back = append(back, "back") }}
	down := fmt.Errorf("%w: get job a: unexpected EOF", claim.ErrUnavailable)
	if !r.Due() {
		t.Error("Due of a store that answers = false, want true")
	}
	for range 3 {
		if !r.Unreachable(down) {
			t.Errorf("Unreachable(%v) = false, want true", down)
		}
	}
	if len(lost) != 1 || lost[0] != down.Error() || len(back) != 0 {
		t.Errorf("after 3 failures: lost %q, back %d; want the first error once, no return", lost, len(back))
	}
	waitFor(t, "a retry to be due", r.Due)
	if r.Unreachable(nil) {
		t.Error("Unreachable(nil) = true, want false")
	}
	r.Answered()
	if len(back) != 1 || !r.Due() {
		t.Errorf("after the store answered: back %d, due %v; want once, due", len(back), r.Due())
	}
	r.Unreachable(down)
	if r.Unreachable(claim.ErrNotFound) {
		t.Error("Unreachable(ErrNotFound) = true, want false: the store answered")
	}
	if len(lost) != 2 || len(back) != 2 {
		t.Errorf("a second outage: lost %d, back %d; want 2 each", len(lost), len(back))
	}
}

// Riding turns a failure to reach the store into not done yet, and lets
// every other outcome through, a failure once ctx ended included.
func TestReachRiding(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r := &Reach{}
	down := fmt.Errorf("%w: list runs: connection refused", claim.ErrUnavailable)
	result := func() (bool, error) { return false, down }
	if done, err := r.Riding(ctx, result)(); done || err != nil {
		t.Errorf("Riding of an unreachable store = %v, %v; want false, nil", done, err)
	}
	waitFor(t, "a retry to be due", r.Due)
	result = func() (bool, error) { return true, nil }
	if done, err := r.Riding(ctx, result)(); !done || err != nil {
		t.Errorf("Riding once the store answers = %v, %v; want true, nil", done, err)
	}
	other := errors.New("no such job")
	result = func() (bool, error) { return false, other }
	if _, err := r.Riding(ctx, result)(); err != other {
		t.Errorf("Riding of another error = %v, want it", err)
	}
	cancel()
	result = func() (bool, error) { return false, down }
	if _, err := r.Riding(ctx, result)(); err != down {
		t.Errorf("Riding of an unreachable store once ctx ended = %v, want the error", err)
	}
}

// A store that answers reads but refuses writes (claim.ErrReadOnly) stays
// in its outage through the reads that go through: only a write, which
// Answered notes, ends it. A read ends any other outage.
func TestReachReadsDoNotEndRefusedWrites(t *testing.T) {
	var lost, back int
	r := &Reach{Lost: func(error) { lost++ }, Back: func(time.Duration) { back++ }}
	refused := fmt.Errorf("%w: %w: claim jobs: read-only transaction", claim.ErrUnavailable, claim.ErrReadOnly)
	for range 3 {
		r.Unreachable(refused)
		r.AnsweredRead()
	}
	if lost != 1 || back != 0 {
		t.Errorf("refused writes between reads: lost %d, back %d; want 1, 0", lost, back)
	}
	r.Answered()
	if back != 1 {
		t.Errorf("after a write went through: back %d, want 1", back)
	}
	r.Unreachable(fmt.Errorf("%w: connection refused", claim.ErrUnavailable))
	r.AnsweredRead()
	if lost != 2 || back != 2 {
		t.Errorf("a read after an unreachable store: lost %d, back %d; want 2, 2", lost, back)
	}
}

// With Settle, the store's return is said once it has answered for that
// long: a failure before then (a connection the restart broke, a server
// that took a setting in one session before another) is the same outage
// going on, said neither lost nor back again, and the return said is the
// whole outage's. Flush says a return waiting for its Settle at once, and
// every later one as it comes.
func TestReachSaysAReturnThatSettled(t *testing.T) {
	var mu sync.Mutex
	var lost int
	var backs []time.Duration
	r := &Reach{Settle: time.Hour,
		Lost: func(error) { mu.Lock(); lost++; mu.Unlock() },
		Back: func(away time.Duration) { mu.Lock(); backs = append(backs, away); mu.Unlock() }}
	said := func() (int, []time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		return lost, slices.Clone(backs)
	}
	down := fmt.Errorf("%w: renew leases: unexpected EOF", claim.ErrUnavailable)
	began := time.Now()
	r.Unreachable(down)
	r.Answered()
	if r.returned() != nil {
		t.Error("after an answer the loops still wait for the store, want them to go on at once")
	}
	r.Unreachable(down) // stumbles once more
	time.Sleep(10 * time.Millisecond)
	r.Answered()
	if l, b := said(); l != 1 || len(b) != 0 {
		t.Errorf("an outage that went on before it settled: lost %d, back %v; want 1, none yet", l, b)
	}
	r.Flush()
	if l, b := said(); l != 1 || len(b) != 1 || b[0] < 10*time.Millisecond || b[0] > time.Since(began) {
		t.Errorf("flushed: lost %d, back %v; want 1, and the whole outage's length once", l, b)
	}
	r.Flush()
	if _, b := said(); len(b) != 1 {
		t.Errorf("a second flush said the return again: back %v", b)
	}

	r.Unreachable(down)
	r.Answered()
	if l, b := said(); l != 2 || len(b) != 2 {
		t.Errorf("an outage after the flush: lost %d, back %d; want 2, 2: said at once", l, len(b))
	}

	// Unflushed, the timer says it.
	lost, backs = 0, nil
	r = &Reach{Settle: time.Millisecond, Lost: r.Lost, Back: r.Back}
	r.Unreachable(down)
	r.Answered()
	waitFor(t, "the return to be said once settled", func() bool { _, b := said(); return len(b) == 1 })
	if l, _ := said(); l != 1 {
		t.Errorf("lost %d, want 1", l)
	}
}

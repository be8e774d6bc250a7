package run

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// scaleCheck bounds how often a worker reads its slot count: it looks on
// every change to the store, and a busy store changes thousands of times a
// second.
const scaleCheck = 100 * time.Millisecond

// scaler runs the worker's slots: as many as its registry row says
// (`worker scale N` sets it), read on store changes and every poll, and
// said back in the row once applied (ScaledTo), which `worker scale` waits
// for: a claim after it returns holds to the new count. Slots
// above the count park before their next claim (a running job goes on);
// slots are started when the count grows past those ever started. A slot
// below the count claims only while fewer jobs than the count run (take),
// so that a worker scaled down while busy starts nothing until its jobs
// above the count have ended. It returns once soft ends; it is counted in
// slots itself, so that adding to slots never races slots.Wait.
type scaler struct {
	w       *Worker
	want    int32 // slots that may claim now; read by the slots
	mu      sync.Mutex
	started int
	held    atomic.Int32 // slots claiming or running a job (take, put)
	unpark  broadcast    // fired when the count changes, for parked slots
}

// run starts n slots, then follows the count until soft ends.
func (s *scaler) run(soft context.Context, n int, slots *sync.WaitGroup, start func(i int)) {
	defer slots.Done()
	s.grow(n, slots, start)
	changes, err := s.w.Store.Changes(soft)
	if err != nil {
		return
	}
	t := time.NewTicker(s.w.Config.PollInterval)
	defer t.Stop()
	applied := n // as registered
	for {
		select {
		case <-soft.Done():
			for range changes {
			}
			return
		case <-changes:
		case <-t.C:
		}
		if n, err := s.w.Store.WorkerSlots(soft, s.w.id); err == nil {
			if n != s.count() {
				s.grow(n, slots, start)
				s.w.logf("scaled to %d slot(s); running jobs go on", n)
			}
			// Said once the slots hold to it; again on the next look if the
			// store did not take it.
			if n != applied && s.w.Store.ScaledTo(soft, s.w.id, n) == nil {
				applied = n
			}
		}
		select {
		case <-soft.Done():
		case <-time.After(scaleCheck):
		}
	}
}

// grow sets the count to n, starting the slots it lacks.
func (s *scaler) grow(n int, slots *sync.WaitGroup, start func(i int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.want = int32(max(n, 1))
	for ; s.started < int(s.want); s.started++ {
		slots.Add(1)
		go start(s.started)
	}
	s.unpark.fire()
	s.w.wake.fireAll()
}

// unparked is fired when the count changes. A parked slot takes it before
// it reads the count again, so a change in between is not lost.
func (s *scaler) unparked() <-chan struct{} { return s.unpark.wait() }

// count is how many slots may claim now.
func (s *scaler) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.want)
}

// take reports whether slot i may claim now: it is below the count and
// fewer jobs than the count run or are being claimed. A slot that may
// claim holds its place until put, whether it found a job or not.
func (s *scaler) take(i int) bool {
	n := int32(s.count())
	if int32(i) >= n {
		return false
	}
	for {
		held := s.held.Load()
		if held >= n {
			return false
		}
		if s.held.CompareAndSwap(held, held+1) {
			return true
		}
	}
}

// keep reports whether slot i, which holds its place and whose job just
// completed, may claim its next job at once (in the completion's own
// transaction): it is below the count, and no more jobs than the count run.
func (s *scaler) keep(i int) bool {
	n := s.count()
	return i < n && int(s.held.Load()) <= n
}

// put gives back the place take gave slot i. Slots parked while more jobs
// than the count ran (only after a scale down) look again.
func (s *scaler) put() {
	s.held.Add(-1)
	s.mu.Lock()
	over := int(s.want) < s.started
	s.mu.Unlock()
	if over {
		s.unpark.fire()
	}
}

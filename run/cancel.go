package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// How a canceled job is stopped, in whichever process runs it:
//
//  1. `cancel` marks the processing job in the store (claim.Store.Cancel)
//     and writes the wake file: every worker's dispatch goroutine wakes.
//  2. A worker running jobs asks the store which of its runs were canceled
//     (claim.Store.CancelRequested: one indexed read) and cancels their
//     contexts with errCanceled.
//  3. The run's exec.Cmd stops its process group (killGroup: TERM, then
//     KILL after stop-timeout); the worker waits until the group is gone,
//     and ends the run canceled (claim.Store.EndCanceled), which wakes the
//     waiting `cancel` command.
//
// No step polls: the latency is the wake file's and one query. If the
// worker dies at any point, the reaper that recovers the run kills the
// group and, because the job is marked, ends it canceled (claim.Recover).

// errCanceled is the cause of a run's context when its job was canceled.
var errCanceled = errors.New("job canceled")

// steering maps the runs in a worker's slots to the cancel of their
// contexts. A cancel seen before its run is registered (between the claim
// and the start) is kept and applied when it is.
type steering struct {
	mu      sync.Mutex
	running map[claim.RunID]context.CancelCauseFunc
	early   map[claim.RunID]bool
	// over: runs whose command has ended (their end is being recorded),
	// or that a fence stopped (lease.go): fences pass them by.
	over map[claim.RunID]bool
	// leases: when each run's lease ends, by this worker's clock (lease.go).
	leases map[claim.RunID]lease
	added  uint64 // runs added so far
	// groups: each started run's process group; suspended: the jobs whose
	// processes their `run` stopped (suspend.go).
	groups    map[claim.RunID]int
	suspended map[string]bool
}

// add registers a run about to start, whose lease ends at leaseUntil; it
// is canceled at once if a cancel for it came first.
func (s *steering) add(id claim.RunID, cancel context.CancelCauseFunc, leaseUntil time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		s.running = map[claim.RunID]context.CancelCauseFunc{}
		s.leases = map[claim.RunID]lease{}
	}
	s.running[id] = cancel
	s.added++
	s.leases[id] = lease{until: leaseUntil, seq: s.added}
	if s.early[id] {
		delete(s.early, id)
		cancel(errCanceled)
	}
}

// remove forgets a run whose end is recorded.
func (s *steering) remove(id claim.RunID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, id)
	delete(s.early, id)
	delete(s.over, id)
	delete(s.leases, id)
	delete(s.groups, id)
}

// holds reports whether a run is registered.
func (s *steering) holds(id claim.RunID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.running[id]
	return ok
}

// recording reports whether a run is registered and its command is over:
// its slot is recording its end.
func (s *steering) recording(id claim.RunID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.running[id]
	return ok && s.over[id]
}

// ended notes that a run's command is over.
func (s *steering) ended(id claim.RunID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over == nil {
		s.over = map[claim.RunID]bool{}
	}
	s.over[id] = true
}

// idle reports whether no run is registered.
func (s *steering) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.running) == 0
}

// stop cancels the runs ids, remembering those not registered yet.
func (s *steering) stop(ids []claim.RunID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if cancel, ok := s.running[id]; ok {
			cancel(errCanceled)
			continue
		}
		if s.early == nil {
			s.early = map[claim.RunID]bool{}
		}
		s.early[id] = true
	}
}

// cancelCheckInterval bounds how often a busy worker asks for canceled
// runs: each of its finished jobs changes the store, and one indexed read
// per change would cost a busy worker a few percent. A cancel that comes
// within this long of the last check waits for the rest of it.
const cancelCheckInterval = 10 * time.Millisecond

// watchCancels stops this worker's runs whose jobs are canceled, on every
// store change (throttled, see cancelCheckInterval), and on every poll
// interval while a job runs, in case a wake-up was missed. On changes it
// also says when the worker's queues are paused or resumed. It returns when
// ctx ends; changes is Store.Changes(ctx).
func (w *Worker) watchCancels(ctx context.Context, changes <-chan struct{}) {
	poll := time.NewTicker(w.Config.PollInterval)
	defer poll.Stop()
	var checked time.Time
	var later <-chan time.Time // a check owed for changes since the last one
	check := func() {
		checked, later = time.Now(), nil
		w.checkCancels(ctx)
		w.notePauses(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-changes:
			if !ok {
				return
			}
			if since := time.Since(checked); since >= cancelCheckInterval {
				check()
			} else if later == nil {
				later = time.After(cancelCheckInterval - since)
			}
		case <-later:
			check()
		case <-poll.C:
			if !w.steer.idle() {
				check()
			}
		}
	}
}

// checkCancels stops this worker's runs whose jobs were canceled.
func (w *Worker) checkCancels(ctx context.Context) {
	ids, err := w.Store.CancelRequested(ctx, w.id)
	if err != nil {
		// An unusable store is said once, by the loop it stops (schedule,
		// heartbeat); these checks come every second until then.
		if ctx.Err() == nil && !w.storeDown(err) && !claim.Unusable(err) {
			w.logf("look for canceled jobs: %v", err)
		}
		return
	}
	w.steer.stop(ids)
}

// groupPoll is how often a worker looks whether a stopped run's process
// group is gone yet; a process that ends on TERM is gone within a few.
const groupPoll = 2 * time.Millisecond

// awaitGroup waits until no process of group pgid is left: a canceled run
// is over when its processes are, not when its shell is. The group got TERM
// and will get KILL after stop-timeout (killGroup); what still lives
// killWait after that is KILLed again and left to the reaper's record.
func (w *Worker) awaitGroup(pgid int) {
	deadline := time.Now().Add(w.settings().StopTimeout + killWait)
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		time.Sleep(groupPoll)
	}
}

// groupAlive reports whether a process of group pgid still runs. Zombies
// do not count: they have exited, and whoever reaps them (init, in a
// container perhaps late) is not the worker.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	pids, err := os.ReadDir("/proc")
	if err != nil {
		return true // no /proc (macOS): zombies count, the deadline bounds them
	}
	for _, p := range pids {
		if p.Name()[0] < '0' || p.Name()[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		fields := strings.Fields(string(stat[i+1:]))
		if i < 0 || len(fields) < 3 {
			continue
		}
		if fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" && fields[0] != "X" {
			return true
		}
	}
	return false
}

package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Each run a worker holds has a lease in the store, which is the worker's
// right to run the job until it ends: set by the run's claim, moved on by
// each renewal of the worker's leases (the heartbeat). The worker keeps its
// own copy of when each lease ends, on its own clock and never later than
// the store's (measured from before the claim or renewal was sent), and
// stops a run whose lease ends unrenewed (fence), because other hosts may
// then take the run for lost: each run by its own lease, so that a run
// claimed a moment ago, which proves the store answers, is not stopped for
// an older run's lapse. A renewal also says which runs the store assigns to
// the worker: a run it holds that is not among them (a crash of the server
// took its claim back, or another worker recovered it) is stopped at once,
// since another worker may be running the job already (SPEC §6).

// errLeaseLapsed is the cause of a run's context when the worker could not
// renew its lease in time: another worker may recover the run and start
// the job again, so this one must not go on with it.
var errLeaseLapsed = errors.New("lease lapsed while the store was unreachable")

// errUnassigned is the cause of a run's context when a renewal found that
// the store no longer assigns the run to this worker.
var errUnassigned = errors.New("the store no longer assigns it to this worker")

// lease is when a held run's lease ends, and when the run was added.
type lease struct {
	until time.Time
	seq   uint64 // steering.added when it was added
}

// fencedBy returns the cause of a run stopped because it may no longer be
// this worker's to run (errLeaseLapsed, errUnassigned), or nil.
func fencedBy(run context.Context) error {
	cause := context.Cause(run)
	if errors.Is(cause, errLeaseLapsed) || errors.Is(cause, errUnassigned) {
		return cause
	}
	return nil
}

// mark returns how many runs were added so far: a renewal sent after it
// speaks for those runs, and not for runs added later, whose claims it
// may not have seen.
func (s *steering) mark() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.added
}

// renewed applies a renewal sent after mark, which renewed ids until
// until: every run added by mark whose command still runs holds its lease
// until then if it is among ids, and is stopped (errUnassigned) if not. It
// returns how many runs it stopped, and whether ids holds a run that is not
// held here.
func (s *steering) renewed(ids []claim.RunID, mark uint64, until time.Time) (stopped int, unheld bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	renewed := make(map[claim.RunID]bool, len(ids))
	for _, id := range ids {
		renewed[id] = true
		if _, ok := s.running[id]; !ok {
			unheld = true
		}
	}
	for id, l := range s.leases {
		if l.seq > mark || s.over[id] {
			continue
		}
		if renewed[id] {
			l.until = until
			s.leases[id] = l
			continue
		}
		s.stopOne(id, errUnassigned)
		stopped++
	}
	return stopped, unheld
}

// lapseOf returns when run id's lease ends; zero when it is not held.
func (s *steering) lapseOf(id claim.RunID) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leases[id].until
}

// groupLapses returns, by process group, when the lease of each run whose
// command still runs ends: what the guard judges them by (guard_linux.go).
func (s *steering) groupLapses() map[int]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int]time.Time, len(s.groups))
	for id, g := range s.groups {
		if l, ok := s.leases[id]; ok && !s.over[id] {
			out[g] = l.until
		}
	}
	return out
}

// stopLapsed stops every run whose command still runs and whose lease
// ended by now (errLeaseLapsed), and returns how many.
func (s *steering) stopLapsed(now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, l := range s.leases {
		if !s.over[id] && !now.Before(l.until) {
			s.stopOne(id, errLeaseLapsed)
			n++
		}
	}
	return n
}

// stopOne cancels a run with cause, and marks it over. s.mu is held.
func (s *steering) stopOne(id claim.RunID, cause error) {
	s.running[id](cause)
	if s.over == nil {
		s.over = map[claim.RunID]bool{}
	}
	s.over[id] = true
}

// nextLapse returns when the first lease of a run whose command still runs
// ends; ok is false when there is none.
func (s *steering) nextLapse() (at time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, l := range s.leases {
		if !s.over[id] && (!ok || l.until.Before(at)) {
			at, ok = l.until, true
		}
	}
	return at, ok
}

// heartbeat renews the leases of running jobs until ctx ends, and stops the
// worker if `worker stop` asked while a wake-up was missed. It renews at
// every interval, and at once when the store is back after an outage. A
// renewal that found the worker's registration gone (another host's reaper
// took it for dead during an outage longer than the lease) put it back,
// which the worker says; runs recovered meanwhile were not renewed, and
// renewed stops them. A renewal that found the schema newer than this
// binary's stops the worker as `worker stop` would, and it exits 1.
func (w *Worker) heartbeat(ctx context.Context, stop context.CancelFunc) {
	t := time.NewTicker(w.Config.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.storeBack(): // nil, and never ready, while the store answers
		}
		mark := w.steer.mark()
		began := time.Now()
		r, err := w.renew(ctx)
		switch {
		case claim.Unusable(err):
			w.fail(err, stop)
			return
		case err == nil:
			w.storeUp()
			w.diskRoom()
			w.reload(ctx)
			w.sayWakeUps()
			if r.Registered {
				w.emit(Event{Kind: EventRegistered, Worker: w.id})
			}
			if r.Newer != nil {
				// A newer queuectl migrated the store: this worker stops
				// claiming, and goes on renewing the leases of the jobs it
				// runs until they end, then exits with the error.
				w.fail(r.Newer, stop)
			}
			if _, unheld := w.steer.renewed(r.Runs, mark, began.Add(w.Config.Lease)); unheld {
				// A run of this worker that no slot holds: its claim's
				// answer was lost. The reaper looks for it.
				w.unsure.Store(true)
			}
			// Should this worker stop running (SIGSTOP, Ctrl-Z), its runs
			// go on: the guard ends each once its lease lapses.
			runsRenewed(w.steer.groupLapses)
		case ctx.Err() != nil || w.storeDown(err) || w.diskFull(err):
		default:
			w.logf("renew leases: %v", err)
		}
		if r.Stopping {
			stop()
		}
	}
}

// wakeUpsGrace is how long the store's wake-ups may be lost, while it
// answers, before the worker says so: a reconnect takes a moment.
const wakeUpsGrace = 5 * time.Second

// sayWakeUps says once that the store's wake-ups are lost while the store
// answers (its LISTEN connection cannot be made: a server at
// max_connections), so that jobs start a poll interval late, and once that
// they are heard again. Called after each renewal that went through; the
// grace counts from the first such renewal that found them lost, not from
// when they were lost: after an outage the listener is still reconnecting
// when the first renewal goes through.
func (w *Worker) sayWakeUps() {
	_, err := w.Store.WakeUpsLost()
	switch {
	case err == nil:
		if w.wakeUpsLost {
			w.logf("store wake-ups heard again")
		}
		w.wakeUpsLost, w.wakeUpsSeen = false, time.Time{}
	case w.wakeUpsSeen.IsZero():
		w.wakeUpsSeen = time.Now()
	case !w.wakeUpsLost && time.Since(w.wakeUpsSeen) >= wakeUpsGrace:
		w.wakeUpsLost = true
		w.emit(Event{Kind: EventWarning, Err: fmt.Sprintf("store wake-ups lost for %v while the store answers: %v; jobs start up to a poll interval (%v) late until the worker can listen again",
			time.Since(w.wakeUpsSeen).Round(time.Second), err, w.Config.PollInterval)})
	}
}

// renew renews the worker's leases, waiting at most a heartbeat interval
// for the store: a connection that hangs (a network that drops packets
// rather than refusing them, or a lock another session holds on the
// queue's tables) must not hold up the next renewal. No answer in time is
// the store's absence, said as that whatever the driver made of the
// deadline (the store may have classified it already).
func (w *Worker) renew(ctx context.Context) (claim.Renewal, error) {
	limit := w.Config.HeartbeatInterval
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	r, err := w.Store.Renew(rctx, w.registration(), w.Config.Lease)
	if err != nil && rctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w: renew leases: no answer within %v (the server cannot be reached, "+
			"or the renewal waits for a lock another session holds on the queue's tables)",
			claim.ErrUnavailable, limit.Round(time.Millisecond))
	}
	return r, err
}

// registration is the worker's registry row as it stands now, for a
// renewal to put back when a reaper removed it: the slots it has now
// (`worker scale` set them in the row that went), and whether it is
// stopping (what `worker stop` set there is gone with it).
func (w *Worker) registration() claim.WorkerInfo {
	info := w.info
	if n := w.scale.count(); n > 0 {
		info.Slots = n
	}
	info.Stopping = w.stopping.Load()
	return info
}

// fence stops each run whose lease ends unrenewed, when it ends, until ctx
// ends: other hosts may take it for lost from then on (outage.go). Runs
// claimed since the last look hold leases longer than a heartbeat
// interval, so it looks again at least that often.
func (w *Worker) fence(ctx context.Context) {
	t := time.NewTimer(w.Config.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n := w.steer.stopLapsed(time.Now()); n > 0 {
			w.emit(Event{Kind: EventFenced, Slots: n, Duration: w.Config.Lease})
		}
		next := w.Config.HeartbeatInterval
		if at, ok := w.steer.nextLapse(); ok {
			next = min(next, time.Until(at))
		}
		t.Reset(max(next, time.Millisecond))
	}
}

// lateClaim gives back run r of job j, claimed with only left of its lease
// (runOne): not started, its job pending again and the attempt not
// counted. Should the store not take it back, the run is this worker's in
// the store that no slot holds: its renewals find it, and the reaper
// recovers it (reapUnseen).
func (w *Worker) lateClaim(hard context.Context, j claim.Job, r claim.Run, left time.Duration) {
	why := fmt.Sprintf("its claim came back with %v of its %v lease left, too late to start it safely",
		left.Round(time.Millisecond), w.Config.Lease)
	if left <= 0 {
		why = fmt.Sprintf("its claim came back once its %v lease had ended, too late to start it safely", w.Config.Lease)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(hard), 30*time.Second)
	defer cancel()
	err := w.Store.Release(ctx, r, why)
	switch {
	case err == nil:
		w.emit(Event{Kind: EventWarning, Job: j.ID, Run: r.Attempt, Err: fmt.Sprintf(
			"job %s: run %d not started: %s; it runs again, not counted as an attempt", j.ID, r.Attempt, why)})
	case errors.Is(err, claim.ErrLost):
		// Recovered by another worker already: not this one's to give back.
	default:
		w.unsure.Store(true)
		w.logf("job %s: run %d not started (%s), and not given back: %v; it is recovered as a run no slot holds", j.ID, r.Attempt, why, err)
	}
}

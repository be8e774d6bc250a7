package claim

import (
	"context"
	"iter"
	"slices"
	"strings"
	"time"
)

// Why a pending job is not runnable now (Job.PendingReason), in the order
// they are told: the first that holds is the job's reason.
const (
	ReasonScheduled = "scheduled" // run_at (or delay, or a lost run's backoff) is in the future
	ReasonWaiting   = "waiting"   // on jobs it runs after (Job.WaitingOn)
	ReasonPaused    = "paused"    // its queue is paused
	ReasonLimited   = "limited"   // its queue runs as many jobs as its limit allows
)

// PendingReasons lists the reasons in the order they are told.
var PendingReasons = []string{ReasonScheduled, ReasonWaiting, ReasonPaused, ReasonLimited}

// ReasonRunnable is the Filter.Reason of the pending jobs that have none:
// a free slot would start them now.
const ReasonRunnable = "runnable"

// reasonOf is j's reason as Filter.Reason names it: "" when j is not
// pending.
func reasonOf(j Job) string {
	switch {
	case j.State != Pending:
		return ""
	case j.PendingReason == "":
		return ReasonRunnable
	}
	return j.PendingReason
}

// checkReason refuses a Filter.Reason that is none, or that goes with a
// state other than pending, whose jobs have no reason.
func checkReason(f Filter) error {
	if !slices.Contains(PendingReasons, f.Reason) && f.Reason != ReasonRunnable {
		return invalidf("no reason %q: a pending job is %s, or %s", f.Reason, strings.Join(PendingReasons, ", "), ReasonRunnable)
	}
	if f.State != "" && f.State != Pending {
		return invalidf("reason %s with state %s: only pending jobs have a reason", f.Reason, f.State)
	}
	return nil
}

// blockers is what keeps whole queues from running: read once per listing
// (two small reads), so that a job's reason costs no query of its own.
type blockers struct {
	allPaused bool
	paused    map[string]bool
	limited   map[string]bool // at their limit now
}

// blockers reads the paused queues and those at their limit.
func (s *Store) blockers(ctx context.Context) (blockers, error) {
	b := blockers{paused: map[string]bool{}, limited: map[string]bool{}}
	paused, err := s.engine.Paused(ctx)
	if err != nil {
		return b, err
	}
	for _, q := range paused {
		b.paused[q] = true
	}
	b.allPaused = b.paused[AllQueues]
	queues, err := s.engine.Queues(ctx)
	if err != nil {
		return b, err
	}
	for _, q := range queues {
		if q.MaxRunning > 0 && q.Running >= q.MaxRunning {
			b.limited[q.Name] = true
		}
	}
	return b, nil
}

// reason is j's PendingReason at now.
func (b blockers) reason(j Job, now time.Time) string {
	switch {
	case j.State != Pending:
		return ""
	case j.RunAfter.After(now):
		return ReasonScheduled
	case j.Waiting > 0:
		return ReasonWaiting
	case b.allPaused || b.paused[j.Queue]:
		return ReasonPaused
	case b.limited[j.Queue]:
		return ReasonLimited
	}
	return ""
}

// heldBack is j's HeldBack at now: why the queue of failed job j, whose
// retry is due, keeps it from running.
func (b blockers) heldBack(j Job, now time.Time) string {
	switch {
	case j.State != Failed || j.RunAfter.After(now):
		return ""
	case b.allPaused || b.paused[j.Queue]:
		return ReasonPaused
	case b.limited[j.Queue]:
		return ReasonLimited
	}
	return ""
}

// withReasons sets the PendingReason of every pending job jobs yields, and
// the HeldBack of every failed one.
func (s *Store) withReasons(ctx context.Context, jobs iter.Seq2[Job, error]) iter.Seq2[Job, error] {
	return func(yield func(Job, error) bool) {
		// Read before the listing starts: while it runs, it holds the
		// store's connection (SQLite).
		b, err := s.blockers(ctx)
		if err != nil {
			yield(Job{}, err)
			return
		}
		now := s.Now()
		for j, err := range jobs {
			j.PendingReason, j.HeldBack = b.reason(j, now), b.heldBack(j, now)
			if !yield(j, err) {
				return
			}
		}
	}
}

// PendingCounts returns how many pending jobs each reason keeps from
// running (a reason without jobs is absent), and how many are runnable.
func (s *Store) PendingCounts(ctx context.Context) (map[string]int, error) {
	b, err := s.blockers(ctx)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	byQueue, err := s.engine.PendingCounts(ctx, now)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, c := range byQueue {
		out[ReasonScheduled] += c.Scheduled
		out[ReasonWaiting] += c.Waiting
		ready := c.Pending - c.Scheduled - c.Waiting
		switch r := b.reason(Job{State: Pending, Queue: c.Queue}, now); r {
		case ReasonPaused, ReasonLimited:
			out[r] += ready
		}
	}
	for k, n := range out {
		if n == 0 {
			delete(out, k)
		}
	}
	return out, nil
}

// QueuePending is a queue's pending jobs: how many, and how many of them
// are scheduled for later or wait for others (a job both is scheduled).
type QueuePending struct {
	Queue                       string
	Pending, Scheduled, Waiting int
}

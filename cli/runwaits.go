package cli

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/handoff"
)

// runWaits is what run says of its job while it waits (SPEC §4, §5): once
// that it waits for a slot of its limited queue, once that its queue is
// paused, and why it cannot move for a while (a stall, as wait says it)
// once, and again when that changes. It works from each look at the job
// (run.Tail.Look), so that a job that starts to wait later (another run
// took the queue's last slot first) is told too; it reads the store only
// for a job that waits: the job as read says whether it may (its
// PendingReason, its state, its run_after, its dependencies).
//
// The worker's follower of a job handed to it (followFor) and run's own
// follower in the store both use it.
type runWaits struct {
	waiting func(claim.Queue)   // says that the job waits for a slot of its queue
	paused  func(string)        // says that the job's queue is paused
	stalled func(handoff.Stall) // says why the job cannot move for a while

	saidLimit bool      // waiting was said
	saidPause bool      // paused was said
	stall     string    // the key of the stall said last; "" none
	stallLook time.Time // when a stall that reads dependencies was last worked out
}

// runStallSoon is how far ahead a job is due and yet said nothing of: it
// is about to run.
const runStallSoon = 5 * time.Second

// stallEvery bounds how often a stall that reads the job's dependencies is
// worked out: a look comes every few hundred milliseconds.
const stallEvery = time.Second

// look takes in job j, just read from s. Any error of a read is no
// answer: what it says is only news.
func (w *runWaits) look(ctx context.Context, s *claim.Store, j claim.Job) {
	if j.State != claim.Pending && j.State != claim.Held {
		return // running, or retrying: run's events say so
	}
	w.lookStall(ctx, s, j)
	if j.State != claim.Pending {
		return
	}
	switch j.PendingReason {
	case claim.ReasonLimited:
		if !w.saidLimit {
			if q, full := queueFull(ctx, s, j); full {
				w.limited(q)
			}
		}
	case claim.ReasonPaused:
		if !w.saidPause && queuePaused(ctx, s, j) {
			w.pausedQueue(j.Queue)
		}
	}
}

// limited says, once, that the job waits for a slot of queue q.
func (w *runWaits) limited(q claim.Queue) {
	if !w.saidLimit {
		w.saidLimit = true
		w.waiting(q)
	}
}

// pausedQueue says, once, that the job's queue is paused.
func (w *runWaits) pausedQueue(queue string) {
	if !w.saidPause {
		w.saidPause = true
		w.paused(queue)
	}
}

// lookStall says the job's stall (stalls) when it is not the one said
// last; a job due within runStallSoon has none.
func (w *runWaits) lookStall(ctx context.Context, s *claim.Store, j claim.Job) {
	now := s.Now()
	var st stall
	switch {
	case len(j.WaitingOn) > 0 && time.Since(w.stallLook) < stallEvery:
		return
	case j.State == claim.Held || j.RunAfter.After(now.Add(runStallSoon)) || len(j.WaitingOn) > 0:
		w.stallLook = time.Now()
		st = newStalls(ctx, s, []claim.Job{j}, now.Add(runStallSoon)).of(j, 0)
	}
	if st.key == w.stall {
		return
	}
	w.stall = st.key
	if st.why != "" {
		w.stalled(handoff.Stall{Why: st.why, Hint: st.hint})
	}
}

// queueFull returns j's queue when j waits for one of its slots: its
// queue runs as many jobs as its limit, and j, read after the queue,
// has not started. Any error is no answer: the message is only news.
func queueFull(ctx context.Context, s *claim.Store, j claim.Job) (claim.Queue, bool) {
	qs, err := s.Queues(ctx)
	if err != nil {
		return claim.Queue{}, false
	}
	for _, q := range qs {
		if q.Name == j.Queue && q.MaxRunning > 0 && q.Running >= q.MaxRunning {
			now, err := s.Get(ctx, j.ID)
			return q, err == nil && now.State == claim.Pending
		}
	}
	return claim.Queue{}, false
}

// queuePaused reports whether j waits because its queue, or every queue,
// is paused: j, read after the pauses, has not started. Any error is no
// answer, as for queueFull.
func queuePaused(ctx context.Context, s *claim.Store, j claim.Job) bool {
	paused, err := s.Paused(ctx)
	if err != nil || len(claim.PausedOf(paused, []string{j.Queue})) == 0 {
		return false
	}
	now, err := s.Get(ctx, j.ID)
	return err == nil && now.State == claim.Pending
}

package cli

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/handoff"
	"github.com/queuectl/queuectl/run"
)

// runWaits is what run says of its job while it waits (SPEC §4, §5): once
// that it waits for a slot of its limited queue, once that its queue is
// paused, once that it waits for a free slot of the workers serving its
// queue (every one busy for slotWaitAfter), and why it cannot move for a
// while (a stall, as wait says it)
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
	saidSlots bool      // the wait for a free slot was said
	runnable  time.Time // when the job was first seen runnable; zero: not seen so
	slotLook  time.Time // when the slots were last counted
	stall     string    // the key of the stall said last; "" none
	stallLook time.Time // when a stall that reads dependencies was last worked out
}

// runStallSoon is how far ahead a job is due and yet said nothing of: it
// is about to run.
const runStallSoon = 5 * time.Second

// stallEvery bounds how often a stall that reads the job's dependencies is
// worked out, or the slots that a runnable job waits for are counted: a
// look comes every few hundred milliseconds.
const stallEvery = time.Second

// slotWaitAfter is how long a runnable job waits for a free slot before run
// says so: a job that waits a moment for one, as in make -j8 before 4
// slots, is nothing to tell; one that waits on, every slot busy (a
// recursive make whose outer steps hold them all), is.
const slotWaitAfter = time.Second

// look takes in job j, just read from h's store. Any error of a read is
// no answer: what it says is only news.
func (w *runWaits) look(ctx context.Context, h *home, j claim.Job) {
	s := h.store
	if j.State != claim.Pending && j.State != claim.Held {
		return // running, or retrying: run's events say so
	}
	w.lookStall(ctx, s, j)
	if j.State != claim.Pending {
		return
	}
	switch j.PendingReason {
	case "": // runnable: a free slot would start it
		w.lookSlots(ctx, h, j)
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

// lookSlots says, once, that runnable job j waits for a free slot, when it
// has been runnable for slotWaitAfter and every slot of the live workers
// that serve its queue is busy. No live worker serving it is another
// warning (run's, before it waits).
func (w *runWaits) lookSlots(ctx context.Context, h *home, j claim.Job) {
	now := time.Now()
	if w.runnable.IsZero() {
		w.runnable = now
	}
	if w.saidSlots || now.Sub(w.runnable) < slotWaitAfter || now.Sub(w.slotLook) < stallEvery {
		return
	}
	w.slotLook = now
	slots, busy, err := servingSlots(ctx, h, cmp.Or(j.Queue, claim.DefaultQueue))
	if err != nil || slots == 0 || busy < slots {
		return
	}
	if now, err := h.store.Get(ctx, j.ID); err != nil || now.State != claim.Pending {
		return
	}
	w.saidSlots = true
	w.stalled(handoff.Stall{Why: fmt.Sprintf("waits for a free slot: every slot of the workers serving queue %s is busy (%d/%d)",
		cmp.Or(j.Queue, claim.DefaultQueue), busy, slots),
		Hint: "queuectl worker scale N gives each running worker N slots"})
}

// servingSlots counts the slots of the live workers that serve queue, and
// the jobs they run. Any error is no answer.
func servingSlots(ctx context.Context, h *home, queue string) (slots, busy int, err error) {
	live, err := liveWorkers(ctx, h)
	if err != nil {
		return 0, 0, err
	}
	live = slices.DeleteFunc(live, func(w claim.WorkerInfo) bool { return !served(queue, []claim.WorkerInfo{w}) })
	for _, w := range live {
		slots += w.Slots
	}
	if slots == 0 {
		return 0, 0, nil
	}
	busy, err = run.BusySlots(ctx, h.store, live)
	return slots, busy, err
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

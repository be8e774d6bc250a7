package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
)

// stall is why a job cannot move for a while, though a worker serves its
// queue: it is held, scheduled past soon, or waits on a job that cannot
// move. wait and logs -f say it, so that a wait that may never end says
// why (SPEC §4: the pending reason in every view).
type stall struct {
	why  string // after "job ID ": "is held", "waits on a, which is held"
	key  string // what why says, without the clock: said again when it changes
	hint string // the command that moves it; "" when none
}

// stallDepth bounds how far a chain of dependencies is followed.
const stallDepth = 8

// stalls works out the stalls of jobs for one look, reading each job once.
type stalls struct {
	ctx   context.Context
	store *claim.Store
	now   time.Time
	soon  time.Time            // a job due after it is said to be scheduled
	jobs  map[string]claim.Job // read so far
	memo  map[string]stall
	// live are the live workers, when known (knowLive): a dependency in a
	// queue none serves cannot start.
	live     []claim.WorkerInfo
	knowLive bool
}

// newStalls starts a look at now, knowing jobs; a job due after deadline
// (zero: none), or more than a minute ahead, does not run soon.
func newStalls(ctx context.Context, s *claim.Store, jobs []claim.Job, deadline time.Time) *stalls {
	now := s.Now()
	soon := now.Add(time.Minute)
	if !deadline.IsZero() && deadline.Before(soon) {
		soon = deadline
	}
	st := &stalls{ctx: ctx, store: s, now: now, soon: soon, jobs: map[string]claim.Job{}, memo: map[string]stall{}}
	for _, j := range jobs {
		st.jobs[j.ID] = j
	}
	return st
}

// of is job j's stall; zero when it can run, or will soon.
func (s *stalls) of(j claim.Job, depth int) stall {
	if st, ok := s.memo[j.ID]; ok {
		return st
	}
	s.memo[j.ID] = stall{} // a cycle, which enqueue refuses, ends here
	st := s.own(j)
	if st.why == "" && j.State == claim.Pending && depth < stallDepth {
		for _, id := range j.WaitingOn {
			dep, ok := s.job(id)
			if !ok {
				continue
			}
			if d := s.of(dep, depth+1); d.why != "" {
				st = stall{"waits on " + id + ", which " + d.why, "waits on " + id + ", which " + d.key, d.hint}
				break
			}
			if dep.State == claim.Pending && dep.PendingReason == claim.ReasonPaused {
				// Its own queue's pause is checkPaused's; a dependency's is not.
				what := "waits on " + id + ", whose queue " + dep.Queue + " is paused"
				st = stall{what, what, "queuectl resume --queue " + dep.Queue}
				break
			}
			if s.knowLive && dep.Queue != j.Queue && (dep.State == claim.Pending || dep.State == claim.Failed) && !served(dep.Queue, s.live) {
				// Its own queue's is checkServed's; another queue's is not.
				what := "waits on " + id + ", whose queue " + dep.Queue + " no live worker serves"
				st = stall{what, what, "queuectl worker start --queue " + dep.Queue}
				break
			}
		}
	}
	s.memo[j.ID] = st
	return st
}

// own is what keeps j itself from running for a while.
func (s *stalls) own(j claim.Job) stall {
	due := j.RunAfter.UTC().Format(time.RFC3339)
	switch {
	case j.State == claim.Held:
		return stall{"is held", "is held", "queuectl release " + j.ID}
	case j.State == claim.Pending && j.RunAfter.After(s.soon):
		return stall{"is scheduled for " + s.at(j.RunAfter), "is scheduled for " + due, ""}
	case j.State == claim.Failed && j.RunAfter.After(s.soon):
		return stall{"retries at " + s.at(j.RunAfter), "retries at " + due, ""}
	}
	return stall{}
}

// job reads job id once per look; false when it cannot be read (gone).
func (s *stalls) job(id string) (claim.Job, bool) {
	if j, ok := s.jobs[id]; ok {
		return j, true
	}
	j, err := s.store.Get(s.ctx, id)
	if err != nil {
		return j, false
	}
	s.jobs[id] = j
	return j, true
}

// at says when t comes: "19:48 (in 10m)", with the date when not today.
func (s *stalls) at(t time.Time) string {
	local, layout := t.Local(), "15:04"
	if y, m, d := local.Date(); y != s.now.Local().Year() || m != s.now.Local().Month() || d != s.now.Local().Day() {
		layout = "2006-01-02 15:04"
	}
	// The age list's tables show, from this look's clock.
	return local.Format(layout) + " (" + report.Printer{Now: func() time.Time { return s.now }}.Age(t) + ")"
}

// checkStalls warns of the jobs not finished that cannot move for a while
// (stall), once each, and again when why changes; when many do at once,
// it names whyJobs of them and counts the rest.
func (w *jobWatch) checkStalls(ctx context.Context, jobs []claim.Job) {
	s := newStalls(ctx, w.h.store, jobs, w.deadline) // a read cut short by the wait's end is no news
	if live, err := liveWorkers(context.WithoutCancel(ctx), w.h); err == nil {
		s.live, s.knowLive = live, true
	}
	said := map[string]string{}
	var fresh []string
	for _, j := range jobs {
		if finished(j.State) {
			continue
		}
		st := s.of(j, 0)
		if st.why == "" {
			continue
		}
		said[j.ID] = st.key
		if w.stalled[j.ID] != st.key {
			fresh = append(fresh, j.ID)
		}
	}
	w.stalled = said
	if len(fresh) == 0 {
		return
	}
	w.clear()
	for i, id := range fresh {
		if i == whyJobs && len(fresh) > whyJobs+1 {
			fmt.Fprintf(w.out, "queuectl: warning: %d more of the jobs cannot run for a while either\n", len(fresh)-i)
			fmt.Fprintf(w.out, "queuectl: hint: queuectl list --state held; queuectl list --state pending (REASON says why each waits)\n")
			return
		}
		st := s.memo[id]
		fmt.Fprintf(w.out, "queuectl: warning: job %s %s\n", id, st.why)
		if st.hint != "" {
			fmt.Fprintf(w.out, "queuectl: hint: %s\n", st.hint)
		}
	}
}

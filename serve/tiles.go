package serve

import (
	"context"
	"net/url"
	"sort"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
)

// tile is one count on the overview: a state, or a reason a pending job
// cannot run now, with the jobs page it opens.
type tile struct {
	Key   string // the word shown: a state, "runnable" or a pending reason
	Class string // the state the colour comes from
	N     int
	Href  string
	Title string
}

// stateTiles are the overview's counts: pending split into the runnable
// jobs and those that wait for a reason (scheduled and waiting always,
// paused and limited when some are) and the held ones, then every other
// state, and the total.
func stateTiles(st report.Status) (tiles []tile, total int) {
	runnable := st.Counts[claim.Pending]
	var reasons []tile
	for _, r := range claim.PendingReasons {
		n := st.PendingReasons[r]
		runnable -= n
		if n > 0 || r == claim.ReasonScheduled || r == claim.ReasonWaiting {
			reasons = append(reasons, tile{Key: r, Class: "r-" + r, N: n, Href: "/jobs?state=pending&reason=" + r,
				Title: "pending jobs that cannot run now: " + r})
		}
	}
	tiles = append(tiles, tile{Key: claim.ReasonRunnable, Class: "t-pending", N: runnable, Href: "/jobs?state=pending&reason=" + claim.ReasonRunnable,
		Title: "pending jobs a free slot would start now"})
	tiles = append(tiles, reasons...)
	tiles = append(tiles, tile{Key: string(claim.Held), Class: "t-held", N: st.Counts[claim.Held], Href: "/jobs?state=held",
		Title: "held jobs the claim skips until they are released"})
	for _, state := range claim.States {
		total += st.Counts[state]
		if state != claim.Pending && state != claim.Held {
			tiles = append(tiles, tile{Key: string(state), Class: "t-" + string(state), N: st.Counts[state],
				Href: "/jobs?state=" + url.QueryEscape(string(state))})
		}
	}
	return tiles, total
}

// runningRow is a job that runs now, and for how long (RUNNING FOR).
type runningRow struct {
	claim.Job
	Attempts   string
	RunningFor string
}

// runningShown bounds the overview's list of running jobs; the jobs page
// (state processing) has all of them.
const runningShown = 20

// running lists the jobs that run now, the longest running first.
func (s *Server) running(ctx context.Context) ([]runningRow, error) {
	jobs, err := s.store.List(ctx, claim.Filter{State: claim.Processing, Limit: runningShown})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(jobs, func(i, k int) bool { return jobs[i].UpdatedAt.Before(jobs[k].UpdatedAt) })
	p := s.printer()
	rows := make([]runningRow, len(jobs))
	for i, j := range jobs {
		rows[i] = runningRow{Job: j, Attempts: report.Attempts(j), RunningFor: p.RunningFor(j)}
	}
	return rows, nil
}

package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/queuectl/queuectl/claim"
)

// QueueObject is the JSON shape of one queue: its job counts per state,
// as in `status`, their total, its limit on running jobs and whether it is
// paused (by name, or with every queue).
type QueueObject struct {
	Queue      string `json:"queue"`
	Pending    int    `json:"pending"`
	Processing int    `json:"processing"`
	Completed  int    `json:"completed"`
	Failed     int    `json:"failed"`
	Dead       int    `json:"dead"`
	Canceled   int    `json:"canceled"`
	Held       int    `json:"held"`
	Total      int    `json:"total"`
	MaxRunning int    `json:"max_running"` // 0: no limit
	Paused     bool   `json:"paused"`
}

// QueuesJSON returns one object per queue that has jobs, settings or a
// pause of its own, by name; never nil. counts is claim.Store.QueueCounts,
// limits claim.Store.Queues, paused claim.Store.Paused (claim.AllQueues
// pauses each queue, and is no queue of its own).
func QueuesJSON(counts map[string]map[claim.State]int, limits []claim.Queue, paused []string) []QueueObject {
	out := make([]QueueObject, 0, len(counts)+len(limits)+len(paused))
	max := map[string]int{}
	for _, l := range limits {
		max[l.Name] = l.MaxRunning
	}
	all := slices.Contains(paused, claim.AllQueues)
	seen := map[string]bool{}
	add := func(q string) {
		if seen[q] {
			return
		}
		seen[q] = true
		c := counts[q]
		out = append(out, QueueObject{Queue: q, Pending: c[claim.Pending], Processing: c[claim.Processing],
			Completed: c[claim.Completed], Failed: c[claim.Failed], Dead: c[claim.Dead], Canceled: c[claim.Canceled], Held: c[claim.Held], Total: total(c),
			MaxRunning: max[q], Paused: all || slices.Contains(paused, q)})
	}
	for q := range counts {
		add(q)
	}
	for _, l := range limits {
		add(l.Name)
	}
	for _, q := range paused {
		if q != claim.AllQueues {
			add(q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Queue < out[j].Queue })
	return out
}

// Queues renders `queue list`: a table of every queue with jobs, settings
// or a pause, its limit, its jobs in each state (their sum is TOTAL) and
// whether it is paused; JSON: QueuesJSON.
func (p Printer) Queues(counts map[string]map[claim.State]int, limits []claim.Queue, paused []string) error {
	qs := QueuesJSON(counts, limits, paused)
	if p.JSON {
		return WriteJSON(p.Out, qs)
	}
	rows := make([][]string, len(qs))
	for i, q := range qs {
		rows[i] = []string{q.Queue, limit(q.MaxRunning), strconv.Itoa(q.Pending), strconv.Itoa(q.Held), strconv.Itoa(q.Processing),
			strconv.Itoa(q.Failed), strconv.Itoa(q.Completed), strconv.Itoa(q.Dead), strconv.Itoa(q.Canceled),
			strconv.Itoa(q.Total), yesNo(q.Paused)}
	}
	return writeTable(p.Out, []string{"QUEUE", "MAX RUNNING", "PENDING", "HELD", "PROCESSING", "FAILED", "COMPLETED", "DEAD",
		"CANCELED", "TOTAL", "PAUSED"}, rows)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// running is a queue's `running/limit` in `status`.
func running(q claim.Queue) string {
	if q.MaxRunning == 0 {
		return fmt.Sprintf("%d running, no limit", q.Running)
	}
	return fmt.Sprintf("%d/%d running", q.Running, q.MaxRunning)
}

func limit(n int) string {
	if n == 0 {
		return "none"
	}
	return strconv.Itoa(n)
}

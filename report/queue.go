package report

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/queuectl/queuectl/claim"
)

// QueueObject is the JSON shape of one queue: its job counts per state,
// as in `status`, their total, and its limit on running jobs.
type QueueObject struct {
	Queue      string `json:"queue"`
	Pending    int    `json:"pending"`
	Processing int    `json:"processing"`
	Completed  int    `json:"completed"`
	Failed     int    `json:"failed"`
	Dead       int    `json:"dead"`
	Canceled   int    `json:"canceled"`
	Total      int    `json:"total"`
	MaxRunning int    `json:"max_running"` // 0: no limit
}

// QueuesJSON returns one object per queue that has jobs or settings, by
// name; never nil. counts is claim.Store.QueueCounts, limits
// claim.Store.Queues.
func QueuesJSON(counts map[string]map[claim.State]int, limits []claim.Queue) []QueueObject {
	out := make([]QueueObject, 0, len(counts)+len(limits))
	max := map[string]int{}
	for _, l := range limits {
		max[l.Name] = l.MaxRunning
		if counts[l.Name] == nil {
			out = append(out, QueueObject{Queue: l.Name, MaxRunning: l.MaxRunning})
		}
	}
	for q, c := range counts {
		out = append(out, QueueObject{Queue: q, Pending: c[claim.Pending], Processing: c[claim.Processing],
			Completed: c[claim.Completed], Failed: c[claim.Failed], Dead: c[claim.Dead], Canceled: c[claim.Canceled], Total: total(c),
			MaxRunning: max[q]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Queue < out[j].Queue })
	return out
}

// Queues renders `queue list`: a table of every queue with jobs or
// settings, its limit and its jobs per state; JSON: QueuesJSON.
func (p Printer) Queues(counts map[string]map[claim.State]int, limits []claim.Queue) error {
	qs := QueuesJSON(counts, limits)
	if p.JSON {
		return WriteJSON(p.Out, qs)
	}
	rows := make([][]string, len(qs))
	for i, q := range qs {
		rows[i] = []string{q.Queue, limit(q.MaxRunning), strconv.Itoa(q.Pending), strconv.Itoa(q.Processing),
			strconv.Itoa(q.Failed), strconv.Itoa(q.Completed), strconv.Itoa(q.Dead), strconv.Itoa(q.Total)}
	}
	return writeTable(p.Out, []string{"QUEUE", "MAX RUNNING", "PENDING", "PROCESSING", "FAILED", "COMPLETED", "DEAD", "TOTAL"}, rows)
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

package report

import (
	"sort"

	"github.com/queuectl/queuectl/claim"
)

// QueueObject is the JSON shape of one queue: its job counts per state,
// as in `status`, and their total.
type QueueObject struct {
	Queue      string `json:"queue"`
	Pending    int    `json:"pending"`
	Processing int    `json:"processing"`
	Completed  int    `json:"completed"`
	Failed     int    `json:"failed"`
	Dead       int    `json:"dead"`
	Total      int    `json:"total"`
}

// QueuesJSON returns one object per queue that has jobs, by name; never nil.
// counts is claim.Store.QueueCounts.
func QueuesJSON(counts map[string]map[claim.State]int) []QueueObject {
	out := make([]QueueObject, 0, len(counts))
	for q, c := range counts {
		out = append(out, QueueObject{Queue: q, Pending: c[claim.Pending], Processing: c[claim.Processing],
			Completed: c[claim.Completed], Failed: c[claim.Failed], Dead: c[claim.Dead], Total: total(c)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Queue < out[j].Queue })
	return out
}

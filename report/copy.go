package report

import (
	"fmt"
	"strings"
	"time"
)

// CopyStats is what `db copy` copied, table by table.
type CopyStats struct {
	From         string  `json:"from"`
	To           string  `json:"to"`
	Jobs         int64   `json:"jobs"`
	Runs         int64   `json:"runs"`
	Dependencies int64   `json:"dependencies"`
	Schedules    int64   `json:"schedules"`
	QueueLimits  int64   `json:"queue_limits"`
	PausedQueues int64   `json:"paused_queues"`
	Settings     int64   `json:"settings"` // config values set (not defaults)
	Seconds      float64 `json:"seconds"`
}

// Copied renders `db copy`: one line, or one JSON object.
func (p Printer) Copied(st CopyStats) error {
	if p.JSON {
		return WriteJSON(p.Out, st)
	}
	parts := []string{
		plural(st.Jobs, "job", "jobs"), plural(st.Runs, "run", "runs"),
		plural(st.Dependencies, "dependency", "dependencies"), plural(st.Schedules, "schedule", "schedules"),
		plural(st.QueueLimits, "queue limit", "queue limits"), plural(st.PausedQueues, "paused queue", "paused queues"),
		plural(st.Settings, "setting", "settings"),
	}
	took := time.Duration(st.Seconds * float64(time.Second)).Round(time.Millisecond)
	_, err := fmt.Fprintf(p.Out, "Copied %s from %s to %s in %v\n", strings.Join(parts, ", "), st.From, st.To, took)
	return err
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

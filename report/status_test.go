package report

import (
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func TestStatus(t *testing.T) {
	counts := map[claim.State]int{claim.Pending: 2, claim.Processing: 3, claim.Completed: 10, claim.Failed: 1, claim.Dead: 1, claim.Canceled: 4}
	busy := Status{Counts: counts, SpoolWaiting: 1, Rejected: 2, Paused: []string{"nightly"}, Workers: []claim.WorkerInfo{
		{ID: "w-box-100", Host: "box", PID: 100, Slots: 4, StartedAt: ago(time.Hour), HeartbeatAt: ago(2 * time.Second)},
		{ID: "w-box-200", Host: "box", PID: 200, Slots: 1, Queues: []string{"ci", "nightly"},
			StartedAt: ago(5 * time.Minute), HeartbeatAt: ago(1 * time.Second), Stopping: true},
	}, Queues: []claim.Queue{
		{Name: "heavy", MaxRunning: 2, Running: 2, UpdatedAt: ago(time.Hour)},
		{Name: "mail", Running: 1, UpdatedAt: ago(time.Minute)},
	}, QueueCounts: map[string]map[claim.State]int{
		"heavy": {claim.Pending: 2, claim.Processing: 2}, "mail": {claim.Processing: 1, claim.Completed: 10},
	}}
	idle := Status{Counts: map[claim.State]int{}}
	tests := []struct {
		name   string
		status Status
		json   bool
	}{
		{"text", busy, false},
		{"json", busy, true},
		{"idle text", idle, false},
		{"idle json", idle, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, buf := printer(tt.json, false)
			if err := p.Status(tt.status); err != nil {
				t.Fatal(err)
			}
			golden(t, buf.Bytes())
		})
	}
}

// SPEC §5 names these lines; scripts grep for them.
func TestStatusLines(t *testing.T) {
	p, buf := printer(false, false)
	err := p.Status(Status{Counts: map[claim.State]int{claim.Pending: 2, claim.Processing: 3},
		Workers: []claim.WorkerInfo{{ID: "w", Slots: 3}, {ID: "v", Slots: 1}}, Busy: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"  pending: 2", "  processing: 3", "  dead: 0", "  total: 5",
		"  spool: 0", "  rejected: 0", "  workers: 2", "  active: 4", "  busy: 2"} {
		if !strings.Contains("\n"+buf.String(), "\n"+line+"\n") {
			t.Errorf("Status text has no line %q:\n%s", line, buf.String())
		}
	}
}

package report

import (
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func TestQueues(t *testing.T) {
	limits := []claim.Queue{
		{Name: "heavy", MaxRunning: 2, Running: 1, UpdatedAt: ago(time.Hour)},
		{Name: "mail", UpdatedAt: ago(3 * time.Minute)},
	}
	counts := map[string]map[claim.State]int{
		"heavy":   {claim.Pending: 3, claim.Processing: 1, claim.Completed: 5},
		"default": {claim.Pending: 1, claim.Dead: 2},
	}
	// mail is paused by name, later too before it has jobs or settings.
	paused := []string{"later", "mail"}
	tests := []struct {
		name   string
		counts map[string]map[claim.State]int
		limits []claim.Queue
		paused []string
		json   bool
	}{
		{"text", counts, limits, paused, false},
		{"json", counts, limits, paused, true},
		{"every queue paused text", counts, limits, []string{claim.AllQueues}, false},
		{"empty json", nil, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, buf := printer(tt.json, false)
			if err := p.Queues(tt.counts, tt.limits, tt.paused); err != nil {
				t.Fatal(err)
			}
			golden(t, buf.Bytes())
		})
	}
}

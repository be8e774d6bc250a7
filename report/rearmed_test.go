package report_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
)

// TestRearmedLines: what came back with a re-driven job, in the words of
// `dlq retry` and `restart` (the CLI's scripts hold them to the letter).
func TestRearmedLines(t *testing.T) {
	many := make([]string, 12)
	for i := range many {
		many[i] = fmt.Sprintf("j%d", i)
	}
	for _, tc := range []struct {
		name string
		r    claim.Rearmed
		keys map[string]string
		want []string
	}{
		{"nothing", claim.Rearmed{}, nil, nil},
		{"one back", claim.Rearmed{Waiting: []string{"after-bad"}}, nil,
			[]string{"job after-bad came back with d: pending, waiting again"}},
		{"many back", claim.Rearmed{Waiting: many}, nil,
			[]string{"jobs j0, j1, j2, j3, j4, j5, j6, j7, j8, j9 and 2 more came back with d: pending, waiting again"}},
		{"one rewaits", claim.Rearmed{Rewaiting: []string{"joined"}}, nil,
			[]string{"job joined, not started yet, now waits for the new run of d"}},
		{"two rewait", claim.Rearmed{Rewaiting: []string{"x", "y"}}, nil,
			[]string{"jobs x, y, not started yet, now wait for the new run of d"}},
		{"left, key known and not", claim.Rearmed{Waiting: []string{"e"}, Left: []string{"keyed", "gone"}}, map[string]string{"keyed": "nightly"},
			[]string{
				"job e came back with d: pending, waiting again",
				`job keyed stays dead: another job holds its unique_key "nightly"; once that one is done: queuectl dlq retry keyed`,
				"job gone stays dead: another job holds its unique_key; once that one is done: queuectl dlq retry gone",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := report.RearmedLines("d", tc.r, tc.keys); !slices.Equal(got, tc.want) {
				t.Errorf("RearmedLines(d, %+v) = %q, want %q", tc.r, got, tc.want)
			}
		})
	}
}

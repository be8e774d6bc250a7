package report_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
)

// TestDiedLines: what died with a canceled job, in the words `cancel`
// prints on stderr (the CLI's scripts hold them to the letter), the rest
// counted past most.
func TestDiedLines(t *testing.T) {
	dead := func(id, why string) claim.Job { return claim.Job{ID: id, State: claim.Dead, LastError: why} }
	chain := []claim.Job{
		dead("b", "dependency a was canceled"),
		dead("c", "dependency a was canceled (via b)"),
	}
	saidOfChain := []string{
		"job b is dead: dependency a was canceled",
		"job c is dead: dependency a was canceled (via b)",
	}
	var many []claim.Job
	var saidOfMany []string
	for i := range 12 {
		many = append(many, dead(fmt.Sprintf("j%d", i), "dependency a was canceled"))
		saidOfMany = append(saidOfMany, fmt.Sprintf("job j%d is dead: dependency a was canceled", i))
	}
	for _, tc := range []struct {
		name string
		died []claim.Job
		most int
		want []string
	}{
		{"nothing", nil, 10, nil},
		{"a chain", chain, 10, saidOfChain},
		{"as many as shown", chain, 2, saidOfChain},
		{"one more", chain, 1, []string{saidOfChain[0], "and 1 more job died with a: the dead letters list it"}},
		{"more", many, 10, append(slices.Clone(saidOfMany[:10]), "and 2 more jobs died with a: the dead letters list them")},
		{"every one", many, 0, saidOfMany},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := report.DiedLines("a", tc.died, tc.most); !slices.Equal(got, tc.want) {
				t.Errorf("DiedLines(a, %d jobs, %d) = %q, want %q", len(tc.died), tc.most, got, tc.want)
			}
		})
	}
}

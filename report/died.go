package report

import (
	"fmt"

	"github.com/queuectl/queuectl/claim"
)

// DiedLine is what `cancel` prints on stderr of j, a job that died
// waiting for the job canceled, or down the chain for one that did:
// "job b is dead: dependency a was canceled" (its last_error names the
// root cause, and the job it waited for when that is another).
func DiedLine(j claim.Job) string {
	return fmt.Sprintf("job %s is dead: %s", j.ID, j.LastError)
}

// DiedLines is DiedLine of each of died, the jobs that died with job id,
// as the dashboard says them after its Cancel button: the first most of
// them, and when there are more a last line that counts the rest (a job
// thousands wait for must not make a page of thousands of lines); every
// one when most is 0 or less.
func DiedLines(id string, died []claim.Job, most int) []string {
	shown := died
	if most > 0 && len(died) > most {
		shown = died[:most]
	}
	out := make([]string, 0, len(shown)+1)
	for _, j := range shown {
		out = append(out, DiedLine(j))
	}
	switch n := len(died) - len(shown); {
	case n == 1:
		out = append(out, fmt.Sprintf("and 1 more job died with %s: the dead letters list it", id))
	case n > 1:
		out = append(out, fmt.Sprintf("and %d more jobs died with %s: the dead letters list them", n, id))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

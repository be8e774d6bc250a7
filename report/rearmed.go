package report

import (
	"fmt"
	"strings"

	"github.com/queuectl/queuectl/claim"
)

// RearmedLines says what a re-drive of job id (dlq retry, restart) did to
// the jobs that died with it, one line each, in the words `dlq retry` and
// `restart` print on stderr and the dashboard shows after its Retry and
// Restart buttons: the jobs that came back, those that had not started and
// now wait for the new run, and each one that stays dead because a live job
// holds its unique_key, with what to do. keys holds the unique_key of the
// jobs left dead, as far as the caller could read them (report never reads
// the store); a line names no key for a job missing from it. None when r
// names no job.
func RearmedLines(id string, r claim.Rearmed, keys map[string]string) []string {
	var out []string
	if len(r.Waiting) > 0 {
		out = append(out, fmt.Sprintf("%s came back with %s: pending, waiting again", JobNames(r.Waiting), id))
	}
	if len(r.Rewaiting) > 0 {
		verb := "wait"
		if len(r.Rewaiting) == 1 {
			verb = "waits"
		}
		out = append(out, fmt.Sprintf("%s, not started yet, now %s for the new run of %s", JobNames(r.Rewaiting), verb, id))
	}
	for _, left := range r.Left {
		key := ""
		if k, ok := keys[left]; ok {
			key = fmt.Sprintf(" %q", k)
		}
		out = append(out, fmt.Sprintf("job %s stays dead: another job holds its unique_key%s; once that one is done: queuectl dlq retry %s", left, key, left))
	}
	return out
}

// JobNames is "job a" or "jobs a, b, c", the first 10 named.
func JobNames(ids []string) string {
	if len(ids) == 1 {
		return "job " + ids[0]
	}
	names := ids[:min(len(ids), 10)]
	more := ""
	if len(ids) > len(names) {
		more = fmt.Sprintf(" and %d more", len(ids)-len(names))
	}
	return "jobs " + strings.Join(names, ", ") + more
}

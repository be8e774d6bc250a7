package front

import (
	"testing"

	"github.com/queuectl/queuectl/claim/jobs"
)

func TestAttempt(t *testing.T) {
	for _, tt := range []struct {
		name           string
		attempts, runs int // of the job, as read
		run            int
		want           string
	}{
		{"the first run", 1, 1, 1, "attempt 1"},
		{"the first run, read before it began", 0, 0, 1, "attempt 1"},
		{"a retry", 2, 2, 2, "attempt 2"},
		{"the run after one lost with its worker", 1, 2, 2, "attempt 1 (run 2)"},
		{"the first run after a restart", 1, 3, 3, "attempt 1 (run 3)"},
		{"run 2 (after a lost run 1) read once run 3 began", 2, 3, 2, "attempt 1 (run 2)"},
		{"run 1 read once run 2 began", 2, 2, 1, "attempt 1"},
	} {
		j := jobs.Job{Attempts: tt.attempts, Runs: tt.runs}
		if got := Attempt(j, jobs.Run{Attempt: tt.run}); got != tt.want {
			t.Errorf("%s: Attempt = %q, want %q", tt.name, got, tt.want)
		}
	}
}

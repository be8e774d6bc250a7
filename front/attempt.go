package front

import (
	"fmt"

	"github.com/queuectl/queuectl/claim/jobs"
)

// Attempt names run r of job j (j as read at r's start or end) in run's
// notices: "attempt N", N counted as max-retries counts attempts, with
// the run's number after it when they differ: a run lost with its worker,
// or interrupted by its stop, is not counted, so the run after it is the
// same attempt again ("attempt 1 (run 2)"); so is the first run after a
// restart or retry, which count attempts from 0 again. j may have been
// read just before r began (the runs it does not know of yet count) or
// after the next one began (those count no more): either way r's attempt
// is j's attempts, less one for each counted run after r.
func Attempt(j jobs.Job, r jobs.Run) string {
	n := j.Attempts + r.Attempt - j.Runs
	if n > 0 && n != r.Attempt {
		return fmt.Sprintf("attempt %d (run %d)", n, r.Attempt)
	}
	return fmt.Sprintf("attempt %d", r.Attempt)
}

// Named names job id in run's notices: with its label, where it has one,
// so that the lines of `make -j` say which target each is about
// ("job ID (LABEL)").
func Named(id, label string) string {
	if label == "" {
		return id
	}
	return id + " (" + label + ")"
}

// Told reports whether run's notices tell the start of r: a start is
// news only after a run before it (a retry, a run lost with its worker)
// or once run said why the job waits (said); the first run of a job that
// starts at once starts as the command would, without a word.
func Told(r jobs.Run, said bool) bool { return said || r.Attempt > 1 }

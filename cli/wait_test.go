package cli

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// A wait for a big queue that times out names a few of the jobs it still
// waited for and counts the rest: a wait --all of 195,000 pending jobs
// printed every id, 6 MB on one line of stderr.
func TestWaitTimeoutOfManyJobsCountsThem(t *testing.T) {
	h := newHome(t)
	const n = 600
	var spec bytes.Buffer
	for i := range n {
		fmt.Fprintf(&spec, `{"id": "big-%04d", "command": "true"}`+"\n", i)
	}
	cmd := h.command("enqueue", "-q", "-")
	cmd.Stdin = &spec
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("enqueue -: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"wait", "--all", "--timeout", "1"}, {"wait", "--queue", "default", "--timeout", "1"}} {
		out, errText, code := h.run(args...)
		if code != exitTimeout {
			t.Fatalf("queuectl %s with no worker: exit %d, stdout %q; want %d", strings.Join(args, " "), code, out, exitTimeout)
		}
		named := len(regexp.MustCompile(`big-\d{4}`).FindAllString(errText, -1))
		if named > 10 || !strings.Contains(errText, fmt.Sprintf("%d jobs", n)) {
			t.Errorf("queuectl %s: stderr names %d jobs (%d bytes), want at most 10 and the count %d:\n%.400s",
				strings.Join(args, " "), named, len(errText), n, errText)
		}
	}
}

// TestWaitTimeoutCoversFindingTheJobs: --timeout bounds the whole wait,
// finding the jobs of --all or --queue included: at 165,000 jobs that took
// longer than the timeout, and --timeout 3s returned after 6 s. A timeout
// past before the jobs are found says so, with exit 124.
func TestWaitTimeoutCoversFindingTheJobs(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "a", "--command", "true")
	for _, args := range [][]string{{"wait", "--all", "--timeout", "1ns"}, {"wait", "--queue", "default", "--timeout", "1ns"}} {
		_, errText, code := h.run(args...)
		if want := "timed out after 1ns finding the jobs to wait for"; code != exitTimeout || !strings.Contains(errText, want) {
			t.Errorf("queuectl %s: exit %d, stderr %q; want %d and %q", strings.Join(args, " "), code, errText, exitTimeout, want)
		}
	}
}

// TestEndedAsNamesEachJobToShow: the hint of a wait whose jobs did not all
// complete shows each of them (show takes one id), up to whyJobs, and
// counts the rest, which the error names.
func TestEndedAsNamesEachJobToShow(t *testing.T) {
	jobs := func(states ...claim.State) []claim.Job {
		var js []claim.Job
		for i, st := range states {
			js = append(js, claim.Job{ID: fmt.Sprintf("j%d", i), State: st})
		}
		return js
	}
	for _, tc := range []struct {
		jobs []claim.Job
		hint string
	}{
		{jobs(claim.Completed, claim.Dead), "queuectl show j1"},
		{jobs(claim.Dead, claim.Completed, claim.Canceled), "queuectl show j0; queuectl show j2"},
		{jobs(claim.Dead, claim.Dead, claim.Canceled, claim.Dead, claim.Dead),
			"queuectl show j0; queuectl show j1; queuectl show j2 (and so for the 2 more named above)"},
	} {
		var h interface{ Hint() string }
		if err := endedAs(tc.jobs); !errors.As(err, &h) || h.Hint() != tc.hint {
			t.Errorf("endedAs(%v) = %v, want the hint %q", tc.jobs, err, tc.hint)
		}
	}
	if err := endedAs(jobs(claim.Completed)); err != nil {
		t.Errorf("endedAs(completed) = %v, want nil", err)
	}
}

package cli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/urfave/cli/v2"
)

// jobsOut is the stdout of a command that acts on jobs (cancel, restart):
// a line for each job it acted on, or with --json one array of those jobs
// as they are once it is done (job objects, as list --json prints them).
type jobsOut struct {
	c     *cli.Context
	store *claim.Store // for the pending jobs' reasons, with --json
	jobs  []claim.Job
}

// did records j and, without --json, prints the line format says of it.
func (o *jobsOut) did(j claim.Job, format string, a ...any) {
	if o.c.Bool("json") {
		o.jobs = append(o.jobs, j)
		return
	}
	fmt.Fprintf(o.c.App.Writer, format+"\n", a...)
}

// end prints the --json array, and returns err, the command's outcome.
func (o *jobsOut) end(err error) error {
	if !o.c.Bool("json") {
		return err
	}
	if perr := printer(o.c).Jobs(withReasons(o.c, o.store, o.jobs)); perr != nil {
		return perr
	}
	return err
}

// withReasons is jobs with why each pending one waits (PendingReason), read
// after the change they report was committed: a read that fails only
// leaves the reasons out, with a warning, and never fails the change.
func withReasons(c *cli.Context, s *claim.Store, jobs []claim.Job) []claim.Job {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Context), 10*time.Second)
	defer cancel()
	out, err := s.WithReasons(ctx, slices.Clone(jobs))
	if err != nil {
		logf(c)("warning: why the pending jobs wait is left out: %v", err)
		return jobs
	}
	return out
}

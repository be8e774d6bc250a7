package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/front"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/urfave/cli/v2"
)

// whyLines bounds how much of a dead job's stderr wait and run repeat.
const whyLines = 10

// whyJobs bounds how many dead jobs one wait explains: the rest are named
// in its error.
const whyJobs = 3

// explainDead says on stderr why the dead jobs among jobs died, the first
// whyJobs of them: what explain says of each. A root cause is told once,
// also when it is waited for beside the jobs it killed.
func explainDead(c *cli.Context, h *home, jobs []claim.Job) {
	told := map[string]bool{}
	n := 0
	for _, j := range jobs {
		if j.State == claim.Dead && n < whyJobs && !told[j.ID] {
			explainOnce(c, h, j, told, false)
			n++
		}
	}
}

// explain says on stderr why job j died, so that one command tells it: its
// last run's exit and the last lines of its stderr. A job dead through a
// dependency names the root cause, and says the same of it.
func explain(c *cli.Context, h *home, j claim.Job) {
	explainOnce(c, h, j, map[string]bool{}, false)
}

// explainPrinted is explain for a command that has just printed the
// stderr of j's last run (logs -f --stderr): it names the run's exit, and
// does not quote those lines again.
func explainPrinted(c *cli.Context, h *home, j claim.Job) {
	explainOnce(c, h, j, map[string]bool{}, true)
}

// explainOnce is explain that says nothing of a job in told, and adds
// those it says why died. printed: the command printed the stderr of j's
// last run already, so its lines are not quoted (a root cause's are).
func explainOnce(c *cli.Context, h *home, j claim.Job, told map[string]bool, printed bool) {
	say := logf(c)
	ctx := context.WithoutCancel(c.Context) // also after Ctrl-C or --timeout
	if j.DeadBy != "" {
		say("job %s is dead: %s", front.Named(j.ID, j.Label), j.LastError)
		told[j.ID] = true
		root, ok := rootCause(ctx, h, j)
		if !ok || root.State != claim.Dead || told[root.ID] {
			return
		}
		j, printed = root, false
	}
	told[j.ID] = true
	runs, err := h.store.RunsWithTails(ctx, j.ID)
	if err != nil || len(runs) == 0 {
		say("job %s is dead: %s", front.Named(j.ID, j.Label), orText(j.LastError, "it never ran"))
		return
	}
	r := runs[len(runs)-1]
	say("job %s is dead: run %d %s", front.Named(j.ID, j.Label), r.Attempt, runEnd(r))
	errLog, outLog := run.Log{Run: r, Stderr: true}, run.Log{Run: r}
	lines, err := errLog.LastLines(whyLines)
	switch {
	case err != nil:
		say("its stderr: %v", err)
	case len(lines) == 0 && errLog.Size() > 0:
		// Printed, but nothing a terminal would show as text.
		say("its stderr has %s, none of it text (blank lines or terminal escapes): queuectl logs %s --stderr", report.Bytes(errLog.Size()), j.ID)
	case len(lines) == 0 && outLog.Size() > 0:
		say("its stderr is empty; its stdout has %s: queuectl logs %s", report.Bytes(outLog.Size()), j.ID)
	case len(lines) == 0:
		say("it printed nothing")
	case printed:
		// The caller printed them in full.
	default:
		say("the last lines of its stderr (all of it: queuectl logs %s --stderr):", j.ID)
		var b strings.Builder
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
		}
		fmt.Fprint(c.App.ErrWriter, b.String())
	}
}

// rootCause follows j's dead_by down to the job whose own end made it dead.
func rootCause(ctx context.Context, h *home, j claim.Job) (claim.Job, bool) {
	for range 1000 { // a chain is acyclic; the bound is against a store being changed under us
		if j.DeadBy == "" {
			return j, true
		}
		var err error
		if j, err = h.store.Get(ctx, j.DeadBy); err != nil {
			return j, false
		}
	}
	return j, false
}

// runEnd says how run r ended: "exited 7", "failed: timed out after 5s".
func runEnd(r claim.Run) string {
	switch {
	case r.ExitCode != nil && (r.Error == "" || r.Error == "exit status "+strconv.Itoa(*r.ExitCode)):
		return "exited " + strconv.Itoa(*r.ExitCode)
	case r.Error != "":
		return r.Outcome + ": " + r.Error
	}
	return orText(r.Outcome, "is still running")
}

func orText(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

package cli

import (
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:        "status",
		Usage:       "show job counts per state, spool files waiting and live workers",
		Description: "Example: queuectl status --json | jq .pending",
		Flags:       []cli.Flag{jsonFlag},
		Action: withHomeSpool(true, func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			counts, err := h.store.Counts(c.Context)
			if err != nil {
				return err
			}
			waiting, rejected, err := spool.Count(h.dirs)
			if err != nil {
				return err
			}
			workers, err := liveWorkers(c.Context, h)
			if err != nil {
				return err
			}
			busy, err := run.BusySlots(c.Context, h.store, workers)
			if err != nil {
				return err
			}
			paused, err := h.store.Paused(c.Context)
			if err != nil {
				return err
			}
			reasons, err := h.store.PendingCounts(c.Context)
			if err != nil {
				return err
			}
			st := report.Status{Counts: counts, SpoolWaiting: waiting, Rejected: rejected, Workers: workers, Busy: busy,
				Paused: paused, PendingReasons: reasons}
			if st.Queues, st.QueueCounts, err = queueSettings(c.Context, h); err != nil {
				return err
			}
			if u := h.dirs.Unsafe(); u != nil {
				st.SpoolUnsafe = fmt.Sprintf("%s (nothing is ingested); fix: %s", u.Problem, u.Fix)
			}
			return printer(c).Status(st)
		}),
	}
}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list jobs, oldest first (--newest: newest first)",
		Description: `--limit N keeps the first N jobs in the order shown: the oldest, or with --newest the newest.
REASON says why a pending job cannot run now (scheduled, waiting, paused, limited), and when
a failed job retries ("retry in 28s"; "retry due" once its time has come, "retry due, paused"
or "retry due, limited" when its queue holds it back). --reason lists the pending jobs of one
reason, or with runnable those a free slot would start now.

Example: queuectl list --state failed --newest --limit 20
Example: queuectl list --reason limited`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "state", Usage: "only jobs in `STATE` (pending, processing, completed, failed, dead, canceled, held)"},
			&cli.StringFlag{Name: "queue", Usage: "only jobs of queue `Q`"},
			&cli.StringFlag{Name: "label", Usage: "only jobs labelled `L`"},
			&cli.StringFlag{Name: "reason", Usage: "only pending jobs of `REASON` (scheduled, waiting, paused, limited; runnable: of none)"},
			&cli.IntFlag{Name: "limit", Usage: "only the first `N` jobs in the order shown (default: 0, all)"},
			&cli.BoolFlag{Name: "newest", Usage: "newest first"},
			jsonFlag,
		},
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			queue, err := queueOf(c)
			if err != nil {
				return err
			}
			f := claim.Filter{Queue: queue, Label: c.String("label"), Reason: c.String("reason"), Limit: c.Int("limit"), Newest: c.Bool("newest")}
			if c.IsSet("label") && f.Label == "" {
				// `list --label "$L"` with L unset: not every job.
				return fmt.Errorf("%w: label \"\" is not valid: give the label to list, or leave --label out", claim.ErrInvalid)
			}
			if f.Limit < 0 {
				return withHint(usagef("--limit %d: give 0 (all) or more", f.Limit), "queuectl list --newest --limit 20")
			}
			if c.IsSet("state") {
				st, err := claim.ParseState(c.String("state"))
				if err != nil {
					return err
				}
				f.State = st
			}
			if _, set := os.LookupEnv("GOGC"); c.Bool("json") && !set {
				// A JSON list keeps ~1 MB live and makes ~700 bytes of
				// garbage a row: at the default GOGC it collects every
				// few thousand rows, in the goroutine reading the store,
				// which bounds the list. 400 takes 5% off that goroutine's
				// CPU for 13 MB more resident (DECISIONS.md). Not tables:
				// their blocks keep more live, and would pass 64 MB. A
				// GOGC the user set is theirs.
				defer debug.SetGCPercent(debug.SetGCPercent(400))
			}
			// Streamed from the store to stdout: a million jobs start
			// at once, in flat memory.
			return printer(c).JobStream(h.store.Jobs(c.Context, f))
		}),
	}
}

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show one job with every field and every run",
		ArgsUsage: "ID",
		Description: `The job's environment (env) is shown by name only: its values are often
secrets. --env shows them.

Example: queuectl show --json nightly-db`,
		Flags: []cli.Flag{jsonFlag,
			&cli.BoolFlag{Name: "env", Usage: "show the values of the job's env, not only their names"}},
		Action: withHome(func(c *cli.Context, h *home) error {
			id, err := oneID(c, h)
			if err != nil {
				return err
			}
			j, err := h.store.Get(c.Context, id)
			if err != nil {
				return err
			}
			// With the tails' bytes: show prints those of runs whose
			// files are not here (report.Printer.FromTail).
			runs, err := h.store.RunsWithTails(c.Context, j.ID)
			if err != nil {
				return err
			}
			p := runsPrinter(c)
			p.Env = c.Bool("env")
			if err := p.Job(j, runs); err != nil {
				return err
			}
			if err := showWhyFailed(p, j, runs); err != nil {
				return err
			}
			sayWorkerGone(c, h, j)
			return nil
		}),
	}
}

// showWhyFailed ends show of a failed or dead job with the last lines of
// its latest run's stderr, as wait says why a job died: why it failed is
// then on the page. Not in JSON (logs --json has the streams), nor where
// show printed the run's kept tail already (its file is not here).
func showWhyFailed(p report.Printer, j claim.Job, runs []claim.Run) error {
	if p.JSON || (j.State != claim.Failed && j.State != claim.Dead) || len(runs) == 0 {
		return nil
	}
	r := runs[len(runs)-1]
	if r.Outcome != claim.OutcomeFailed || fromTail(r, true) {
		return nil
	}
	lines, err := run.Log{Run: r, Stderr: true}.LastLines(whyLines)
	if err != nil || len(lines) == 0 {
		return nil // show's runs table says what it printed
	}
	return p.LastStderr(j.ID, r.Attempt, lines)
}

// sayWorkerGone warns, of a processing job whose worker is gone (killed,
// crashed), that its run, which shows as running, is lost: nothing runs
// it until a worker starts and recovers it.
func sayWorkerGone(c *cli.Context, h *home, j claim.Job) {
	if j.State != claim.Processing || j.WorkerID == "" {
		return
	}
	workers, err := h.store.Workers(c.Context)
	if err != nil {
		return
	}
	for _, w := range workers {
		if w.ID == j.WorkerID && run.Gone(w, run.HostID(), time.Now(), h.config.Lease) {
			logf(c)("warning: worker %s (pid %d on %s) is gone without stopping: its run is lost, and the job runs again once a worker starts (queuectl worker start)",
				w.ID, w.PID, w.Host)
		}
	}
}

// oneID is the id of the one job a command takes (show, edit), from its
// argument: a whole id or a unique prefix of one.
func oneID(c *cli.Context, h *home) (string, error) {
	a, err := args(c, 1, 1)
	if err != nil {
		return "", err
	}
	return h.store.Resolve(c.Context, a[0])
}

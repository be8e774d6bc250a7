package cli

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
	"github.com/urfave/cli/v2"
)

func dlqCommand() *cli.Command {
	return &cli.Command{
		Name:        "dlq",
		Usage:       "dead jobs: list, retry, purge",
		Description: "Example: queuectl dlq retry --all",
		Subcommands: []*cli.Command{{
			Name:  "list",
			Usage: "list dead jobs: why each died and the last line of its stderr",
			Description: `Oldest first; --limit N keeps the first N in the order shown, --newest shows the newest first.

Example: queuectl dlq list --newest --limit 20`,
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "limit", Usage: "only the first `N` jobs in the order shown (default: 0, all)"},
				&cli.BoolFlag{Name: "newest", Usage: "newest first"},
				jsonFlag,
			},
			Action: withHome(dlqList),
		}, {
			Name:        "retry",
			Usage:       "make dead jobs pending again, with attempts reset to 0",
			ArgsUsage:   "ID... | --all",
			Description: "Example: queuectl dlq retry nightly-db",
			Flags:       []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "retry every dead job"}, jsonFlag},
			Action:      withHome(dlqRetry),
		}, {
			Name:        "purge",
			Usage:       "delete dead jobs, their runs, logs and dead/ files",
			ArgsUsage:   "ID...",
			Description: "On a store that several hosts share, the worker of each other host that ran the job\nremoves its logs/ID there within 60 heartbeat intervals (5 minutes by default).\n\nExample: queuectl dlq purge nightly-db",
			Action:      withHome(dlqPurge),
		}},
	}
}

func dlqList(c *cli.Context, h *home) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	f := claim.Filter{State: claim.Dead, Limit: c.Int("limit"), Newest: c.Bool("newest")}
	if f.Limit < 0 {
		return withHint(usagef("--limit %d: give 0 (all) or more", f.Limit), "queuectl dlq list --newest --limit 20")
	}
	// Streamed: a dead-letter queue of 200,000 jobs starts at once, in
	// flat memory, and `dlq list | head` reads no further than it shows.
	return printer(c).DeadJobStream(deadJobs(c.Context, h.store, f))
}

// deadPage is how many dead jobs deadJobs reads from the store at a time.
const deadPage = 1000

// deadJobs streams the dead jobs f selects, in its order, each with the
// last line of its latest run's stderr, read only when its turn comes.
// The jobs are read a page at a time (keyset pagination, Filter.After),
// not through Store.Jobs: while that ranges it holds the store's
// connection (SQLite has one), which each job's stderr needs for its
// runs. Memory stays at a page whatever the queue's size. The stream ends
// at the first error, which it yields.
func deadJobs(ctx context.Context, s *claim.Store, f claim.Filter) iter.Seq2[report.DeadJob, error] {
	return func(yield func(report.DeadJob, error) bool) {
		left := f.Limit // 0: all
		for {
			page := f
			page.Limit = deadPage
			if f.Limit > 0 {
				page.Limit = min(deadPage, left)
			}
			jobs, err := s.List(ctx, page)
			if err != nil {
				yield(report.DeadJob{}, err)
				return
			}
			for _, j := range jobs {
				line, err := run.LastStderrLine(ctx, s, j.ID)
				if err != nil {
					yield(report.DeadJob{}, err)
					return
				}
				if !yield(report.DeadJob{Job: j, LastStderr: line}, nil) {
					return
				}
			}
			left -= len(jobs)
			if len(jobs) < page.Limit || f.Limit > 0 && left == 0 {
				return
			}
			f.After = jobs[len(jobs)-1].Seq
		}
	}
}

func dlqRetry(c *cli.Context, h *home) error {
	ids, err := args(c, 0, -1)
	if err != nil {
		return err
	}
	if c.Bool("all") == (len(ids) > 0) {
		return withHint(usagef("give job ids or --all%s", givenTwice(len(ids) > 0, c.Bool("all"))), "queuectl dlq retry ID...  or  queuectl dlq retry --all")
	}
	out := &jobsOut{c: c, store: h.store}
	if c.Bool("all") {
		return out.end(retryAll(c, h, out))
	}
	err = eachJob(c, h, ids, func(id string) error {
		j, r, err := h.store.RetryChain(c.Context, id)
		if err != nil {
			return err
		}
		removeDead(c, h, id)
		out.did(j, "Retrying job %s", id)
		rearmedWith(c, h, j.ID, r)
		return nil
	})
	syncDead(c, h)
	return out.end(err)
}

// retryAll re-drives every dead job. One whose unique_key a live job holds
// stays dead; it is named on stderr and the exit code is 4 (conflict). One
// that waits for a job removed, dead or canceled stays dead too, named.
func retryAll(c *cli.Context, h *home, out *jobsOut) error {
	jobs, err := h.store.RetryAll(c.Context)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		removeDead(c, h, j.ID)
		out.did(j, "Retrying job %s", j.ID)
	}
	// Those left dead for a dependency are told, not failed: a job whose
	// dependency was removed stays dead for good, and a nightly
	// `dlq retry --all` must not fail for it every night.
	if blocked, err := h.store.BlockedDead(c.Context); err == nil && len(blocked) > 0 {
		var names []string
		for _, j := range blocked {
			names = append(names, j.ID)
		}
		logf(c)("still dead: %s: each waits for a job that is removed, dead or canceled (queuectl show %s names it)",
			strings.Join(names, ", "), names[0])
	}
	held, err := h.store.HeldDead(c.Context)
	if err != nil || len(held) == 0 {
		return err
	}
	var names []string
	for _, j := range held {
		names = append(names, fmt.Sprintf("%s (unique_key %q)", j.ID, j.UniqueKey))
	}
	return withHint(fmt.Errorf("%w: still dead: %s; a pending, processing or failed job holds that unique_key",
		claim.ErrConflict, strings.Join(names, ", ")), "retry once that job is done: queuectl dlq retry "+held[0].ID)
}

func dlqPurge(c *cli.Context, h *home) error {
	ids, err := args(c, 1, -1)
	if err != nil {
		return err
	}
	return eachJob(c, h, ids, func(id string) error {
		if err := h.store.Purge(c.Context, id); err != nil {
			return err
		}
		removeFiles(c, h, id)
		fmt.Fprintf(c.App.Writer, "Purged job %s\n", id)
		return nil
	})
}

func removeDead(c *cli.Context, h *home, id string) {
	if err := spool.RemoveDead(h.dirs.Dead, id); err != nil {
		logf(c)("dead/%s.json: %v", id, err)
	}
}

// removeFiles removes a purged job's dead/ file and logs.
func removeFiles(c *cli.Context, h *home, id string) {
	removeDead(c, h, id)
	if err := run.RemoveLogs(h.logs, id); err != nil {
		logf(c)("%v", err)
	}
}

func purgeCommand() *cli.Command {
	return &cli.Command{
		Name:  "purge",
		Usage: "delete finished jobs with their runs, logs and dead/ files (retention)",
		Description: `Deletes the jobs in --state (completed, dead or canceled) that finished more than --older-than ago.

Says on stderr how many it deleted, and nothing when there were none (cron mails only
when something happened); -q: nothing at all.

Removes the log files of this home. On a store that several hosts share, the worker of
each other host that ran one of the jobs removes its logs/ID there within 60 heartbeat
intervals (5 minutes by default), or when it next starts.

Example (crontab): 0 3 * * * $HOME/go/bin/queuectl purge --state completed --older-than 168h
(cron's PATH is /usr/bin:/bin: give queuectl's full path, as command -v queuectl prints it)`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "state", Usage: "purge jobs in `STATE`: completed, dead or canceled"},
			durationFlag("older-than", 0, "that finished more than `D` ago, e.g. 168h or 604800 (seconds); required"),
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing"},
		},
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			age := durationOf(c, "older-than")
			if !c.IsSet("state") || !c.IsSet("older-than") || age < 0 {
				return withHint(usagef("give --state and a --older-than of 0 or more"), "queuectl purge --state completed --older-than 168h")
			}
			st, err := claim.ParseState(c.String("state"))
			if err != nil {
				return err
			}
			ids, err := h.store.PurgeFinished(c.Context, st, time.Now().Add(-age))
			if err != nil {
				return err
			}
			for _, id := range ids {
				removeFiles(c, h, id)
			}
			if len(ids) > 0 && !c.Bool("quiet") {
				logf(c)("purged %d %s job(s) that finished more than %v ago", len(ids), st, age)
			}
			return nil
		}),
	}
}

package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/urfave/cli/v2"
)

func dbCommand() *cli.Command {
	return &cli.Command{
		Name:        "db",
		Usage:       "the store itself: back it up, restore it, copy it into another database",
		Description: "Example: queuectl db copy --to postgres://queue@db.internal/queue",
		Subcommands: []*cli.Command{{
			Name:  "copy",
			Usage: "copy the store (jobs, runs, schedules, queues, config) into an empty database",
			Description: `Copies everything the store of this home (or --db) keeps into a database that
holds nothing yet, in one transaction: every job with its id, state, attempts and
times, every run numbered as it was, with its hook outcomes, the dependencies,
dead jobs, queue limits and paused queues, schedules with their next due times,
and the settings of config. After the copy, list, show, logs and the order in
which jobs are claimed are the same on both. The store copied from is only read:
it stays as it was.

This is how a home grows from one machine to many: copy its store into
PostgreSQL, then run every command with --db URL (or QUEUECTL_DB=URL). The runs'
log files stay where they are, on this host, and logs reads them there.

Refused, with nothing written: a target that holds a job, run, schedule, queue
setting or config value of its own; a copy while a worker runs on the store
(stop them first: queuectl worker stop --wait), since what it did meanwhile
would be only there. A job left processing by a worker that crashed is copied
as it is; the first worker on the new store recovers it as a lost run. Big
stores report their progress on stderr; Ctrl-C stops the copy and leaves the
target empty.

Example: queuectl db copy --to postgres://queue@db.internal/queue`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "to", Usage: "the empty database to copy into: a postgres://USER@HOST/DATABASE `URL`, or a new SQLite file's path"},
				jsonFlag,
			},
			Action: dbCopy,
		}, dbBackupCommand(), dbRestoreCommand()},
	}
}

// dbCopy is `db copy`: the store of the home (or --db), read only, into
// the empty store at --to.
func dbCopy(c *cli.Context) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	to := c.String("to")
	if to == "" {
		return withHint(usagef("name the database to copy into with --to"), "queuectl db copy --to postgres://USER@HOST/DATABASE")
	}
	dir, from, err := homePaths(c)
	if err != nil {
		return err
	}
	if sameStore(from, to) {
		return withHint(usagef("--to names the store copied from (%s)", claim.RedactLocation(from)), "copy into another database: --to postgres://USER@HOST/DATABASE")
	}
	src, err := openSource(from)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := refuseLiveWorkers(c, &home{dir: dir, db: from, store: src}); err != nil {
		return err
	}
	dst, err := claim.Open(to)
	if err != nil {
		return namedBy("--to", err)
	}
	defer dst.Close()
	start := time.Now()
	counts, err := src.CopyTo(c.Context, dst, func(table string, rows int64, done bool) {
		if !done {
			logf(c)("copying %s: %d rows so far", table, rows)
		}
	})
	if err != nil && c.Context.Err() != nil {
		// Ctrl-C: the transaction is rolled back, and "context canceled"
		// would not tell the user that the target holds nothing of it.
		logf(c)("interrupted: nothing was copied, %s is as it was", dst.Path())
		return &exitStatus{exitInterrupted, nil}
	}
	if err != nil {
		return err
	}
	return printer(c).Copied(report.CopyStats{From: src.Path(), To: dst.Path(),
		Jobs: counts["jobs"], Runs: counts["runs"], Dependencies: counts["deps"],
		Schedules: counts["schedules"], QueueLimits: counts["queue_limits"],
		PausedQueues: counts["paused_queues"], Settings: counts["config"],
		Seconds: time.Since(start).Seconds()})
}

// namedBy is err, of opening the store that flag names, with its hint
// (the engine's, written for the command's own store) naming flag.
func namedBy(flag string, err error) error {
	var h interface{ Hint() string }
	if errors.As(err, &h) && strings.Contains(h.Hint(), claim.LocationFlag) {
		return withHint(err, strings.ReplaceAll(h.Hint(), claim.LocationFlag, flag))
	}
	return err
}

// openSource opens the store to copy from, read only.
func openSource(location string) (*claim.Store, error) {
	s, err := claim.OpenReadOnly(location)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, withHint(fmt.Errorf("no store to copy at %s", claim.RedactLocation(location)),
			"name the home to copy with --home DIR, or its database with --db PATH")
	}
	return s, err
}

// sameStore reports whether two locations name one store as written: the
// same URL, or the same file's path.
func sameStore(a, b string) bool {
	if claim.EngineFor(a) != claim.EngineFor(b) {
		return false
	}
	if claim.EngineFor(a) == claim.EngineSQLite {
		a, b = filepath.Clean(a), filepath.Clean(b)
		if absA, err := filepath.Abs(a); err == nil {
			a = absA
		}
		if absB, err := filepath.Abs(b); err == nil {
			b = absB
		}
	}
	return a == b
}

// refuseLiveWorkers refuses to copy a store that a worker still runs on:
// what it did after the copy's snapshot would be on the old store only.
func refuseLiveWorkers(c *cli.Context, h *home) error {
	var err error
	if h.config, err = h.store.Config(c.Context); err != nil {
		return err
	}
	who, n, err := liveWorkerNames(c, h)
	if err != nil || n == 0 {
		return err
	}
	return withHint(fmt.Errorf("%d worker(s) still run on %s (%s): what they do during a copy would not be copied", n, claim.RedactLocation(h.db), who),
		"stop them first: queuectl worker stop --wait; then copy, and start workers with --db on the new store")
}

// liveWorkerNames says which workers of h's store live ("pid N on HOST,
// …") and how many.
func liveWorkerNames(c *cli.Context, h *home) (string, int, error) {
	live, err := liveWorkers(c.Context, h)
	if err != nil {
		return "", 0, err
	}
	var who []string
	for _, w := range live {
		who = append(who, fmt.Sprintf("pid %d on %s", w.PID, w.Host))
	}
	return strings.Join(who, ", "), len(live), nil
}

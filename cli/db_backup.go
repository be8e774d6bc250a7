package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/urfave/cli/v2"
)

func dbBackupCommand() *cli.Command {
	return &cli.Command{
		Name:      "backup",
		Usage:     "write a consistent copy of the SQLite store to a new file, while workers run",
		ArgsUsage: "FILE",
		Description: `Writes the whole store (jobs, runs, schedules, queues, config) as it is at one
instant into FILE, a new SQLite file of mode 0600, while workers and commands go
on using the store. FILE must not exist. Put it back with queuectl db restore.

A PostgreSQL store is backed up with pg_dump.

Example: queuectl db backup ~/backups/queue-$(date +%F).db`,
		Flags:  []cli.Flag{jsonFlag},
		Action: dbBackup,
	}
}

func dbRestoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "put a backup in place of the SQLite store (no worker may run)",
		ArgsUsage: "FILE",
		Description: `Checks FILE (PRAGMA integrity_check, a queuectl schema this version knows),
then swaps it in for the store in one rename. The database it replaces is kept
beside it as queue.db.before-restore-TIME, with its WAL, so that nothing is lost;
the WAL is never laid over the restored file.

Refused while a worker of this home runs (stop them first: queuectl worker stop
--wait), and while the processes of a run of a worker that died still run (the
restored store would not know them). Any other process that still has the old file
open finds it replaced and stops. A PostgreSQL store is restored with pg_restore.

Example: queuectl db restore ~/backups/queue-2026-11-20.db`,
		Flags:  []cli.Flag{jsonFlag},
		Action: dbRestore,
	}
}

// dbBackup is `db backup FILE`.
func dbBackup(c *cli.Context) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	if err := sqliteOnly(c, "pg_dump"); err != nil {
		return err
	}
	// SQLite's backup writes a file it can seek in: - would be a file
	// named -, and a directory is no file name.
	if a[0] == "-" {
		return withHint(usagef("db backup writes a SQLite file, not a stream: - is not stdout here"),
			"write it to a file, then send that: queuectl db backup FILE && gzip -c FILE")
	}
	if fi, err := os.Stat(a[0]); err == nil && fi.IsDir() {
		return withHint(usagef("%s is a directory: give the backup's file name", a[0]),
			"queuectl db backup "+filepath.Join(a[0], "queue-$(date +%F).db"))
	}
	return withStore(func(c *cli.Context, h *home) error {
		if err := h.store.Backup(c.Context, a[0]); err != nil {
			return err
		}
		return printer(c).BackedUp(report.Backup{Store: h.store.Path(), File: a[0], Bytes: fileSize(a[0])})
	})(c)
}

// dbRestore is `db restore FILE`.
func dbRestore(c *cli.Context) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	if err := sqliteOnly(c, "pg_restore"); err != nil {
		return err
	}
	if a[0] == "-" {
		return usagef("db restore reads a SQLite file, not a stream: - is not stdin here")
	}
	dir, db, err := homePaths(c)
	if err != nil {
		return err
	}
	if sameStore(a[0], db) {
		return withHint(usagef("%s is the store itself", a[0]), "restore a backup written by: queuectl db backup FILE")
	}
	// The backup is checked first: a file that is no backup is refused
	// for itself, whether workers run or not.
	kept, err := claim.Restore(c.Context, db, a[0], func() error { return refuseRestoreUnderWorkers(c, dir, db) })
	if err != nil {
		return err
	}
	if err := printer(c).Restored(report.Backup{Store: db, File: a[0], Bytes: fileSize(db), Kept: kept}); err != nil {
		return err
	}
	sayRestoredRuns(c, db)
	return nil
}

// sayRestoredRuns says which jobs the restored store shows running: those
// that ran when the backup was taken, in workers that no longer run them
// (a restore is refused beside a live one). They show processing until a
// worker starts and takes their runs back, as after a crash.
func sayRestoredRuns(c *cli.Context, db string) {
	s, err := claim.OpenReadOnly(db)
	if err != nil {
		return
	}
	defer s.Close()
	runs, err := s.InFlight(c.Context)
	if err != nil || len(runs) == 0 {
		return
	}
	var ids []string
	for _, f := range runs[:min(len(runs), 5)] {
		ids = append(ids, f.JobID)
	}
	if len(runs) > len(ids) {
		ids = append(ids, fmt.Sprintf("and %d more", len(runs)-len(ids)))
	}
	if len(runs) == 1 {
		logf(c)("the backup was taken while 1 job ran (%s): it shows processing until a worker starts, which takes the run back and runs the job again", ids[0])
		return
	}
	logf(c)("the backup was taken while %d jobs ran (%s): they show processing until a worker starts, which takes their runs back and runs them again",
		len(runs), strings.Join(ids, ", "))
}

// sqliteOnly refuses (exit 2) a PostgreSQL store, naming its own tool.
func sqliteOnly(c *cli.Context, tool string) error {
	_, db, err := homePaths(c)
	if err != nil || claim.EngineFor(db) == claim.EngineSQLite {
		return err
	}
	return withHint(usagef("queuectl db %s works on a SQLite store; this one is PostgreSQL", c.Command.Name),
		fmt.Sprintf("use PostgreSQL's own tool: %s (see its manual)", tool))
}

// refuseRestoreUnderWorkers refuses (exit 4) while a worker of the store
// runs: its jobs would be restored from under it. A store that cannot be
// read (corrupt: the reason to restore) has no worker left on it, since a
// worker stops on a corrupt store.
func refuseRestoreUnderWorkers(c *cli.Context, dir, db string) error {
	s, err := claim.OpenReadOnly(db)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		logf(c)("cannot look for live workers in %s (%v); restoring all the same", claim.RedactLocation(db), err)
		return nil
	}
	defer s.Close()
	h := &home{dir: dir, db: db, store: s}
	if h.config, err = s.Config(c.Context); err != nil {
		return err
	}
	who, n, err := liveWorkerNames(c, h)
	if err != nil {
		return err
	}
	if n > 0 {
		return withHint(fmt.Errorf("%w: %d worker(s) still run on %s (%s)", claim.ErrConflict, n, claim.RedactLocation(db), who),
			"stop them first: queuectl worker stop --wait; then restore")
	}
	// The runs of workers that died: the restored store would not know
	// them, and could run their jobs again while they still run.
	orphans, err := run.Orphans(c.Context, s)
	if err != nil || len(orphans) == 0 {
		return err
	}
	var runs, pids []string
	for _, o := range orphans {
		runs = append(runs, fmt.Sprintf("%s run %d", o.JobID, o.Attempt))
		for _, pid := range o.PIDs {
			pids = append(pids, strconv.Itoa(pid))
		}
	}
	return withHint(fmt.Errorf("%w: %d run(s) of workers that died still run (%s): the restored store would not know them",
		claim.ErrConflict, len(orphans), strings.Join(runs, ", ")),
		"stop their processes (kill "+strings.Join(pids, " ")+", or start a worker, which stops them as it recovers their jobs, and stop it), then restore")
}

func fileSize(path string) int64 {
	fi, err := os.Stat(filepath.Clean(path))
	if err != nil {
		return 0
	}
	return fi.Size()
}

package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// removedLogsEvery is how many heartbeat intervals apart a worker looks
// for the log directories of jobs removed from the store: 5 minutes at
// the default heartbeat-interval of 5 s. Read at each pass, so that a
// config set takes effect at the next one (and tests may shorten it).
const removedLogsEvery = 60

// removedLogsBatch is how many job directories one look-up in the store
// asks about.
const removedLogsBatch = 1000

// keepRemovedLogs removes the log directories of jobs gone from the store
// (PruneRemovedLogs), at start and every removedLogsEvery heartbeat
// intervals, until ctx ends, for a worker of a shared store (PruneRemoved):
// a home used with a store of its own (SQLite) and, once, with another may
// hold the logs of both, and `rm` there removes its own. `rm` and `purge` remove the logs of the home
// they run in; a store that several hosts share has runs of the removed
// jobs on other hosts too, whose logs would otherwise stay there for ever
// (log-retention is 0, keep everything, by default). A pass reads logs/
// once and asks the store one statement per removedLogsBatch directories:
// nothing on the path of a run.
func (w *Worker) keepRemovedLogs(ctx context.Context) {
	if !w.PruneRemoved || w.LogDir == "" {
		return
	}
	var said string
	for {
		_, err := PruneRemovedLogs(ctx, w.Store, w.LogDir)
		switch {
		// A store away is an outage, said once for the worker (storeDown).
		case err != nil && ctx.Err() == nil && !w.storeDown(err) && !w.diskFull(err) && err.Error() != said:
			said = err.Error()
			w.logf("logs/: %v", err)
		case err == nil:
			said = ""
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(removedLogsEvery * w.settings().HeartbeatInterval):
		}
	}
}

// PruneRemovedLogs removes the log directories in logDir of jobs that the
// store no longer has, and returns how many it removed. Only a directory
// named as a job id (claim.ValidID) is looked at, never a link, and of it
// only the regular files named <attempt>.out and <attempt>.err last written
// before the pass read logDir; the directory goes once empty, so anything
// else a user put there keeps it.
//
// A job's directory is only made by a worker that claimed the job, so the
// job is in the store before its directory is in logDir: the store is asked
// after logDir is read, and a directory listed is of a job that existed
// then. A job removed and enqueued again under the same id, whose new run
// starts in between, keeps the files its run writes after the listing.
func PruneRemovedLogs(ctx context.Context, s *claim.Store, logDir string) (int, error) {
	listed := time.Now()
	entries, err := os.ReadDir(logDir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var ids []string
	for _, d := range entries {
		if d.IsDir() && claim.ValidID(d.Name()) { // a symbolic link is not a directory here
			ids = append(ids, d.Name())
		}
	}
	removed := 0
	for batch := range slices.Chunk(ids, removedLogsBatch) {
		exist, err := s.Existing(ctx, batch)
		if err != nil {
			return removed, err
		}
		for _, id := range batch {
			if !exist[id] && removeJobLogs(filepath.Join(logDir, id), listed) {
				removed++
			}
		}
	}
	return removed, nil
}

// removeJobLogs removes the log files in dir last written before listed,
// then dir itself when that left it empty, which it reports.
func removeJobLogs(dir string, listed time.Time) bool {
	files, err := os.ReadDir(dir)
	if err != nil {
		return false // gone meanwhile, or not ours to read: left alone
	}
	for _, f := range files {
		if _, ok := logAttempt(f.Name()); !ok {
			continue
		}
		if info, err := f.Info(); err == nil && info.Mode().IsRegular() && info.ModTime().Before(listed) {
			os.Remove(filepath.Join(dir, f.Name()))
		}
	}
	return os.Remove(dir) == nil // only when empty
}

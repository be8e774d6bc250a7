package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// pruneInterval is how often a worker removes log files past log-retention
// and drops env values past env-retention.
const pruneInterval = 10 * time.Minute

// prune removes log files past log-retention and drops the env of jobs
// finished longer than env-retention ago, at start, every pruneInterval
// and when reload read a changed retention, until ctx ends. With both at 0
// (as they are read each time: settings) it keeps everything.
func (w *Worker) prune(ctx context.Context) {
	t := time.NewTicker(pruneInterval)
	defer t.Stop()
	for {
		w.pruneLogs(ctx)
		w.dropEnv(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.pruneNow:
		}
	}
}

func (w *Worker) pruneLogs(ctx context.Context) {
	keep := w.settings().LogRetention
	if keep <= 0 || w.LogDir == "" {
		return
	}
	cutoff := w.Store.Now().Add(-keep)
	n, err := PruneLogs(ctx, w.Store, w.LogDir, w.host, cutoff)
	switch {
	case err != nil && ctx.Err() == nil && !w.storeDown(err) && !w.diskFull(err):
		w.logf("log-retention: %v", err)
	case n > 0:
		w.logf("log-retention: removed %d log file(s) of runs that ended before %s", n, cutoff.Format(time.DateTime))
	}
}

// dropEnv drops the env values of jobs completed or canceled before
// env-retention: they are often secrets.
func (w *Worker) dropEnv(ctx context.Context) {
	keep := w.settings().EnvRetention
	if keep <= 0 {
		return
	}
	cutoff := w.Store.Now().Add(-keep)
	n, err := w.Store.DropEnv(ctx, cutoff)
	switch {
	case err != nil && ctx.Err() == nil && !w.storeDown(err) && !w.diskFull(err):
		w.logf("env-retention: %v", err)
	case n > 0:
		w.logf("env-retention: dropped the env of %d job(s) finished before %s", n, cutoff.Format(time.DateTime))
	}
}

// PruneLogs removes the log files in logDir of runs of this host that ended
// before cutoff, and those of jobs the store no longer has that were last
// written before it. A running attempt's files are never touched, nor
// anything but regular files named <attempt>.out and <attempt>.err in a job's
// directory: nothing is followed. The store keeps each run's last 64 KiB, so
// `logs` still shows the end of a removed file. It returns how many files
// it removed.
func PruneLogs(ctx context.Context, s *claim.Store, logDir, host string, cutoff time.Time) (int, error) {
	dirs, err := os.ReadDir(logDir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, d := range dirs {
		if ctx.Err() != nil {
			return removed, ctx.Err()
		}
		if !d.IsDir() {
			continue // a symbolic link is not a directory here: never followed
		}
		n, err := pruneJob(ctx, s, filepath.Join(logDir, d.Name()), d.Name(), host, cutoff)
		removed += n
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// pruneJob is PruneLogs for the directory of one job.
func pruneJob(ctx context.Context, s *claim.Store, dir, id, host string, cutoff time.Time) (int, error) {
	files, err := os.ReadDir(dir)
	if err != nil {
		return 0, nil // gone meanwhile, or not ours to read: left alone
	}
	var old []os.DirEntry
	for _, f := range files {
		if info, err := f.Info(); err == nil && info.Mode().IsRegular() && info.ModTime().Before(cutoff) {
			old = append(old, f)
		}
	}
	if len(old) == 0 {
		return 0, nil
	}
	runs, err := s.Runs(ctx, id)
	if err != nil && !errors.Is(err, claim.ErrNotFound) {
		return 0, err
	}
	ended := map[int]bool{} // attempt → its files may go
	current := map[int]bool{}
	for _, r := range runs {
		if r.Host != host {
			continue
		}
		if r.EndedAt.IsZero() {
			current[r.Attempt] = true
		} else if r.EndedAt.Before(cutoff) {
			ended[r.Attempt] = true
		}
	}
	removed := 0
	for _, f := range old {
		attempt, ok := logAttempt(f.Name())
		if !ok || current[attempt] || (len(runs) > 0 && !ended[attempt]) {
			continue
		}
		if os.Remove(filepath.Join(dir, f.Name())) == nil {
			removed++
		}
	}
	os.Remove(dir) // only when empty
	return removed, nil
}

// logAttempt is the attempt number of a log file's name, n.out or n.err.
func logAttempt(name string) (int, bool) {
	base, ok := strings.CutSuffix(name, ".out")
	if !ok {
		base, ok = strings.CutSuffix(name, ".err")
	}
	n, err := strconv.Atoi(base)
	return n, ok && err == nil && n > 0
}

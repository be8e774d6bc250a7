package run

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Copy writes the log file at path to w. A run that has not written
// anything yet may have no file: that is an empty log, not an error.
func Copy(w io.Writer, path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// Follow writes the log file at path to w as it grows, until ended reports
// that the run is over (then it writes what is left and returns nil) or ctx
// ends. It checks for new output every interval.
func Follow(ctx context.Context, w io.Writer, path string, interval time.Duration, ended func() (bool, error)) error {
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for {
		over, err := ended()
		if err != nil {
			return err
		}
		if f == nil {
			if f, err = os.Open(path); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("open log: %w", err)
			}
		}
		if f != nil {
			if _, err := io.Copy(w, f); err != nil {
				return err
			}
		}
		if over {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// RemoveLogs deletes the log directory of job id under logDir, with every
// run's .out and .err, for `purge` and `dlq purge`. A job without logs is no
// error; an id that could name a path outside logDir is refused.
func RemoveLogs(logDir, id string) error {
	if !claim.ValidID(id) {
		return fmt.Errorf("remove logs: invalid job id %q", id)
	}
	if err := os.RemoveAll(filepath.Join(logDir, id)); err != nil {
		return fmt.Errorf("remove logs of %s: %w", id, err)
	}
	return nil
}

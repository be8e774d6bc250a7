package spool

import (
	"errors"
	"fmt"
	"github.com/queuectl/queuectl/internal/private"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Dirs are the directories of one home that hold job files.
type Dirs struct {
	Spool    string // where users drop job files
	Rejected string // files that cannot become jobs, each beside a .reason
	Dead     string // one <id>.json per dead job
	// Schedules holds schedules/NAME.json, the schedules defined by files.
	Schedules string
}

// DirsOf returns the directories of the home directory home.
func DirsOf(home string) Dirs {
	return Dirs{
		Spool:     filepath.Join(home, private.SpoolDir),
		Rejected:  filepath.Join(home, private.RejectedDir),
		Dead:      filepath.Join(home, private.DeadDir),
		Schedules: filepath.Join(home, private.SchedulesDir),
	}
}

// Make creates the directories (and the home) with mode 0700. Existing
// directories keep their mode: CheckSpool judges them.
func (d Dirs) Make() error {
	for _, dir := range []string{d.Spool, d.Rejected, d.Dead, d.Schedules} {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create directory: %w", err)
		}
	}
	return nil
}

// ingesting is the directory in spool/ that holds each ingester's private
// directory of taken files. Its name starts with "." so it is no candidate.
const ingesting = ".ingesting"

// candidate reports whether the spool entry name may be a job file.
func candidate(name string) bool {
	return strings.HasSuffix(name, ".json") && !ignored(name)
}

// ignored reports whether name is left alone on purpose: hidden files and
// files still being written under a temporary name.
func ignored(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp")
}

// Unsafe reports why the spool is refused right now, or nil when it is
// safe (or missing, which the watcher creates): for status.
func (d Dirs) Unsafe() *UnsafeError {
	var u *UnsafeError
	if err := CheckSpool(d.Spool); errors.As(err, &u) {
		return u
	}
	return nil
}

// Count returns how many files wait in the spool (dropped or taken but not
// yet jobs) and how many were rejected. Missing directories count 0.
func Count(d Dirs) (waiting, rejected int, err error) {
	names, err := listNames(d.Spool)
	if err != nil {
		return 0, 0, err
	}
	for _, name := range names {
		if candidate(name) {
			waiting++
		}
	}
	root := filepath.Join(d.Spool, ingesting)
	owners, err := listNames(root)
	if err != nil {
		return 0, 0, err
	}
	for _, o := range owners {
		taken, err := listNames(filepath.Join(root, o))
		if err != nil {
			return 0, 0, err
		}
		waiting += len(taken)
	}
	names, err = listNames(d.Rejected)
	if err != nil {
		return 0, 0, err
	}
	for _, name := range names {
		if !strings.HasPrefix(name, ".") && !strings.HasSuffix(name, reasonExt) {
			rejected++
		}
	}
	return waiting, rejected, nil
}

// listNames returns the names in dir, unsorted; none when dir is missing
// or is no directory.
func listNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	return names, nil
}

// UnsafeError is why a spool directory, or another file of a home, is
// refused, with the fix (private.UnsafeError).
type UnsafeError = private.UnsafeError

// CheckPrivate refuses a directory or file of a home that someone other
// than the current user owns or may write to (private.CheckPrivate).
func CheckPrivate(path, what string, follow bool) error {
	return private.CheckPrivate(path, what, follow)
}

// CheckSpool refuses a spool directory that someone other than the current
// user could drop files into (private.CheckSpool).
func CheckSpool(dir string) error { return private.CheckSpool(dir) }

func owner(fi fs.FileInfo) int { return private.Owner(fi) }
func userName(uid int) string  { return private.UserName(uid) }
func quote(s string) string    { return private.Quote(s) }

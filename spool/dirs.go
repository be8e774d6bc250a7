package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
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
		Spool:     filepath.Join(home, "spool"),
		Rejected:  filepath.Join(home, "rejected"),
		Dead:      filepath.Join(home, "dead"),
		Schedules: filepath.Join(home, "schedules"),
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

// UnsafeError is why a spool directory is refused, with the fix.
type UnsafeError struct {
	What    string // what Dir is, for messages; empty: "spool directory"
	Dir     string
	Problem string // what is wrong
	Fix     string // a shell command that fixes it
}

func (e *UnsafeError) Error() string {
	what := e.What
	if what == "" {
		what = "spool directory"
	}
	return fmt.Sprintf("refusing %s %s: %s; fix: %s", what, e.Dir, e.Problem, e.Fix)
}

// CheckPrivate refuses a directory or file of a home (what names it in
// messages: "home", "logs directory", "database file") that someone other
// than the current user owns or may write to: whoever can write there can
// make queuectl run commands as this user. Inside the home a symbolic link
// is refused too (follow false); the home itself, or a database given
// elsewhere with --db, may be reached through one. A missing path is no
// error. Errors are *UnsafeError, with the fix.
func CheckPrivate(path, what string, follow bool) error {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check %s: %w", what, err)
	}
	mode := "600"
	if fi.IsDir() {
		mode = "700"
	}
	switch uid := owner(fi); {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &UnsafeError{Dir: path, What: what,
			Problem: "it is a symbolic link, and queuectl follows no link inside its home",
			Fix:     fmt.Sprintf("rm %s, or use --home DIR for a home elsewhere", quote(path))}
	case uid != os.Getuid():
		return &UnsafeError{Dir: path, What: what,
			Problem: fmt.Sprintf("it is owned by %s, not by %s who runs queuectl, so its owner can make you run commands", userName(uid), userName(os.Getuid())),
			Fix:     fmt.Sprintf("sudo chown %s %s && chmod %s %s, or use a home of your own with --home", loginName(os.Getuid()), quote(path), mode, quote(path))}
	case fi.Mode().Perm()&0o022 != 0:
		return &UnsafeError{Dir: path, What: what,
			Problem: fmt.Sprintf("it is writable by group or others (mode %#o), so anyone who can write there can run commands as you", fi.Mode().Perm()),
			Fix:     fmt.Sprintf("chmod %s %s", mode, quote(path))}
	}
	return nil
}

// Hint returns the fix alone, for a `hint:` line.
func (e *UnsafeError) Hint() string { return e.Fix }

// CheckSpool refuses a spool directory that someone other than the current
// user could drop files into: anyone who can write there can run commands
// as this user. Errors are *UnsafeError, whose text includes the fix, or
// the error of stat.
func CheckSpool(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("check spool directory: %w", err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		to, _ := os.Readlink(dir)
		return &UnsafeError{Dir: dir, Problem: fmt.Sprintf("it is a symbolic link (to %s), so whoever can change where it points can make you run commands", to),
			Fix: fmt.Sprintf("rm %s && mkdir -m 700 %s", quote(dir), quote(dir))}
	}
	if !fi.IsDir() {
		return &UnsafeError{Dir: dir, Problem: "it is not a directory",
			Fix: fmt.Sprintf("move it away, then mkdir -m 700 %s", quote(dir))}
	}
	if uid := owner(fi); uid != os.Getuid() {
		return &UnsafeError{Dir: dir,
			Problem: fmt.Sprintf("it is owned by %s, not by %s who runs queuectl, so its owner can make you run commands", userName(uid), userName(os.Getuid())),
			Fix:     fmt.Sprintf("sudo chown %s %s && chmod 700 %s, or use a home of your own with --home", loginName(os.Getuid()), quote(dir), quote(dir))}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return &UnsafeError{Dir: dir,
			Problem: fmt.Sprintf("it is writable by group or others (mode %#o), so anyone who can write there can run commands as you", perm),
			Fix:     "chmod 700 " + quote(dir)}
	}
	return nil
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

// owner returns the uid that owns fi's file.
func owner(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// userName names uid for messages: "uid 1001 (bob)".
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

// loginName names uid for a command line: its name, else its number.
func loginName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return quote(u.Username)
	}
	return strconv.Itoa(uid)
}

// quote quotes s for a POSIX shell, so that fixes can be pasted.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

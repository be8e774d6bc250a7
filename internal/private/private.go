// Package private judges whether a home's files are the user's alone:
// whoever else can write a home's spool, database or socket can make
// queuectl run commands as its user. Both programs share it (spool, cli,
// and the small queuectl in front, which links nothing heavier).
package private

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The directories of a home that hold job files, by name: spool.DirsOf
// makes their paths, and the home's checks judge them.
const (
	SpoolDir     = "spool"
	RejectedDir  = "rejected"
	DeadDir      = "dead"
	SchedulesDir = "schedules"
)

// UnsafeError is why a spool directory is refused, with the fix.
type UnsafeError struct {
	What    string // what Dir is, for messages; empty: "spool directory"
	Dir     string
	Problem string // what is wrong
	Fix     string // a shell command that fixes it
}

// Error says what is refused and why. The fix is Hint's, which the CLI
// prints on a line of its own; a log line that has no hint adds Fix.
func (e *UnsafeError) Error() string {
	what := e.What
	if what == "" {
		what = "spool directory"
	}
	return fmt.Sprintf("refusing %s %s: %s", what, e.Dir, e.Problem)
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
	switch uid := Owner(fi); {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &UnsafeError{Dir: path, What: what,
			Problem: "it is a symbolic link, and queuectl follows no link inside its home",
			Fix:     fmt.Sprintf("rm %s, or use --home DIR for a home elsewhere", Quote(path))}
	case uid != os.Getuid():
		return &UnsafeError{Dir: path, What: what,
			Problem: fmt.Sprintf("it is owned by %s, not by %s who runs queuectl, so its owner can make you run commands", UserName(uid), UserName(os.Getuid())),
			Fix:     fmt.Sprintf("sudo chown %s %s && chmod %s %s, or use a home of your own with --home", LoginName(os.Getuid()), Quote(path), mode, Quote(path))}
	case fi.Mode().Perm()&0o022 != 0:
		return &UnsafeError{Dir: path, What: what,
			Problem: fmt.Sprintf("it is writable by group or others (mode %#o), so anyone who can write there can run commands as you", fi.Mode().Perm()),
			Fix:     fmt.Sprintf("chmod %s %s", mode, Quote(path))}
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
			Fix: fmt.Sprintf("rm %s && mkdir -m 700 %s", Quote(dir), Quote(dir))}
	}
	if !fi.IsDir() {
		return &UnsafeError{Dir: dir, Problem: "it is not a directory",
			Fix: fmt.Sprintf("move it away, then mkdir -m 700 %s", Quote(dir))}
	}
	if uid := Owner(fi); uid != os.Getuid() {
		return &UnsafeError{Dir: dir,
			Problem: fmt.Sprintf("it is owned by %s, not by %s who runs queuectl, so its owner can make you run commands", UserName(uid), UserName(os.Getuid())),
			Fix:     fmt.Sprintf("sudo chown %s %s && chmod 700 %s, or use a home of your own with --home", LoginName(os.Getuid()), Quote(dir), Quote(dir))}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return &UnsafeError{Dir: dir,
			Problem: fmt.Sprintf("it is writable by group or others (mode %#o), so anyone who can write there can run commands as you", perm),
			Fix:     "chmod 700 " + Quote(dir)}
	}
	return nil
}

// Owner returns the uid that owns fi's file.
func Owner(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// LookupName gives uid's login name, when known. The full program sets
// it to os/user's lookup (package cli); this package does not import
// os/user, which a build with cgo on links to the C library, and which
// would make the small queuectl in front a dynamically linked program.
// Unset, messages name users by number.
var LookupName func(uid int) (string, bool)

func nameOf(uid int) (string, bool) {
	if LookupName == nil {
		return "", false
	}
	return LookupName(uid)
}

// UserName names uid for messages: "uid 1001 (bob)".
func UserName(uid int) string {
	if name, ok := nameOf(uid); ok {
		return fmt.Sprintf("uid %d (%s)", uid, name)
	}
	return fmt.Sprintf("uid %d", uid)
}

// LoginName names uid for a command line: its name, else its number.
func LoginName(uid int) string {
	if name, ok := nameOf(uid); ok {
		return Quote(name)
	}
	return strconv.Itoa(uid)
}

// Quote quotes s for a POSIX shell, so that fixes can be pasted.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

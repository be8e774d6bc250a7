package spool

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Rejected is one file in rejected/, as `rejected list` shows it.
type Rejected struct {
	Name string
	Size int64
	// At is when the file was rejected (its reason was written); the
	// file's own time when it has no reason.
	At time.Time
	// Reason is the reason file's first line (what is wrong), Fix the rest
	// without its "fix: " prefix; both empty when the reason is missing.
	Reason, Fix string
}

// ListRejected returns the files in rejected/ with their reasons, oldest
// rejection first (then by name). Files whose reason someone deleted are
// listed with an empty reason. Nothing is followed: a rejected symbolic
// link is listed as the link.
func ListRejected(d Dirs) ([]Rejected, error) {
	names, err := listNames(d.Rejected)
	if err != nil {
		return nil, err
	}
	out := []Rejected{}
	for _, name := range names {
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, reasonExt) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(d.Rejected, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // retried or purged meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("list rejected files: %w", err)
		}
		r := Rejected{Name: name, Size: fi.Size(), At: fi.ModTime().UTC()}
		why, at := readReason(filepath.Join(d.Rejected, name+reasonExt), r.At)
		r.Reason, r.Fix, r.At = why.what, why.fix, at
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// maxReason bounds how much of a reason file is read: reject writes a few
// lines, and anything else there is not ours to print at length.
const maxReason = 64 << 10

// readReason reads a reason file without following a link: its first line,
// the fix, the directory the file came from, and when it was written (else
// at).
func readReason(path string, at time.Time) (r reason, when time.Time) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return r, at
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return r, at
	}
	buf := make([]byte, min(fi.Size(), maxReason))
	n, _ := f.ReadAt(buf, 0)
	return parseReason(string(buf[:n])), fi.ModTime().UTC()
}

// reason is a reason file's content.
type reason struct{ what, fix, from string }

// parseReason splits a reason file: what is wrong, then "fix: …" (which
// may run over several lines), then "from: DIR" (absent in older files).
func parseReason(text string) reason {
	var r reason
	text = strings.TrimRight(text, "\n")
	if i := strings.LastIndex(text, "\nfrom: "); i >= 0 {
		text, r.from = text[:i], text[i+len("\nfrom: "):]
	}
	what, rest, _ := strings.Cut(text, "\n")
	r.what, r.fix = what, strings.TrimPrefix(rest, "fix: ")
	return r
}

// RetryRejected moves rejected/name back where it came from, spool/ or
// schedules/, under the same name (after the user fixed it), and removes its
// reason. It never replaces a file there: a name taken is ErrConflict, and
// so is a file the spool would reject again as it is (rejectedAgain). An
// unknown name is ErrNotFound, a name with a slash ErrInvalid.
func RetryRejected(d Dirs, name string) error {
	src, err := rejectedPath(d, name)
	if err != nil {
		return err
	}
	why, _ := readReason(src+reasonExt, time.Time{})
	if err := rejectedAgain(src, name, why); err != nil {
		return err
	}
	dir, where := d.Spool, "the spool"
	if why.from != "" && why.from == d.Schedules {
		dir, where = d.Schedules, "schedules/"
	}
	dst := filepath.Join(dir, name)
	// link+remove rather than rename: rename would silently replace a
	// spool file of the same name, which is someone's job.
	err = os.Link(src, dst)
	switch {
	case errors.Is(err, fs.ErrExist):
		return kindf(claim.ErrConflict, "%s exists in %s already; move it away first, or retry this file under another name: mv %s %s",
			shown(name), where, quote(src), quote(filepath.Join(dir, "other-"+name)))
	case err != nil:
		return fmt.Errorf("retry rejected %s: %w", shown(name), err)
	}
	if err := os.Remove(src); err != nil {
		return fmt.Errorf("retry rejected %s: %w", shown(name), err)
	}
	removeReason(src)
	return nil
}

// rejectedAgain refuses to move back the file at path, rejected/name,
// when the spool would only reject it again as it is, whatever was fixed
// in it: a link, not a regular file, or someone else's. The error's hint
// is the reason's fix (why), which says what would do.
func rejectedAgain(path, name string, why reason) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil // gone meanwhile: the move says so
	}
	var what string
	switch uid := owner(fi); {
	case fi.Mode()&fs.ModeSymlink != 0:
		what = "is a symbolic link"
	case !fi.Mode().IsRegular():
		what = "is not a regular file"
	case uid != os.Getuid():
		what = fmt.Sprintf("is owned by %s, not by %s", userName(uid), userName(os.Getuid()))
	default:
		return nil
	}
	fix := cmp.Or(why.fix, "see why: queuectl rejected list")
	return &refusedError{msg: fmt.Sprintf("rejected/%s %s: moved back, it would be rejected again", shown(name), what), fix: fix}
}

// refusedError is the ErrConflict of a rejected file that cannot go back
// as it is, with the fix as its hint (printed as `queuectl: hint: …`).
type refusedError struct{ msg, fix string }

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return claim.ErrConflict }
func (e *refusedError) Hint() string  { return e.fix }

// PurgeRejected deletes rejected/name and its reason. Errors as
// RetryRejected; a directory (the watcher moves one dropped in the spool
// here too) is deleted when it is empty, and is ErrConflict when it holds
// files, which are nobody's to delete but their owner's.
func PurgeRejected(d Dirs, name string) error {
	path, err := rejectedPath(d, name)
	var dir *dirError
	if errors.As(err, &dir) {
		if err := os.Remove(path); err != nil {
			return kindf(claim.ErrConflict, "rejected/%s is a directory that is not empty; move it where you keep directories: mv %s DIR",
				shown(name), quote(path))
		}
		removeReason(path)
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("purge rejected %s: %w", shown(name), err)
	}
	removeReason(path)
	return nil
}

// dirError is rejectedPath's refusal of a directory: no file to retry.
type dirError struct{ name string }

func (e *dirError) Error() string {
	return fmt.Sprintf("rejected/%s is a directory, not a job file; remove it (queuectl rejected purge %s) or move it yourself", shown(e.name), quote(e.name))
}
func (e *dirError) Unwrap() error { return claim.ErrConflict }

// rejectedPath checks that name is a file in rejected/ and returns its path.
func rejectedPath(d Dirs, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') || strings.HasSuffix(name, reasonExt) {
		return "", kindf(claim.ErrInvalid, "%q is not the name of a rejected file (see: queuectl rejected list)", name)
	}
	path := filepath.Join(d.Rejected, name)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", kindf(claim.ErrNotFound, "no rejected file %s", shown(name))
	}
	if err != nil {
		return "", fmt.Errorf("rejected %s: %w", shown(name), err)
	}
	if fi.IsDir() {
		return path, &dirError{name}
	}
	return path, nil
}

// removeReason removes the reason of a file that is dealt with. A failure
// is not worth reporting: a stale reason only names a file that is gone,
// and ListRejected skips it.
func removeReason(path string) { os.Remove(path + reasonExt) }

// kindError is an error of one of claim's kinds (ErrNotFound, ErrConflict,
// ErrInvalid, for the exit code) whose message is about files, not jobs:
// the sentinel's own words ("no such job") would mislead.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

func kindf(kind error, format string, args ...any) error {
	return &kindError{kind, fmt.Sprintf(format, args...)}
}

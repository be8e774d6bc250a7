package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/queuectl/queuectl/claim"
)

// reasonExt ends the name of the text file beside each rejected file.
const reasonExt = ".reason"

// maxName bounds the names of files that are taken, so that the key prefix
// and a rejected/ suffix still fit the file system's 255 bytes.
const maxName = 200

// problem is why a file cannot become a job.
type problem struct {
	what string // first line of the reason: what is wrong
	// fix says how to fix it, given where the file now is and its spool path.
	fix func(rejected, spool string) string
}

// reject moves the file at src, which came to the spool as name, to
// rejected/ beside a reason. It reports false when src is gone: another
// ingester dealt with it. The reason is created first, O_EXCL: it reserves
// the name, so that concurrent ingesters never overwrite each other's
// rejected files.
func (s *session) reject(src, name string, p problem) (bool, error) {
	for n := 0; n < 1000; n++ {
		target := filepath.Join(s.Dirs.Rejected, rejectedName(name, n))
		reason, err := os.OpenFile(target+reasonExt, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("reject %s: %w", shown(name), err)
		}
		if _, err := os.Lstat(target); err == nil {
			// A rejected file whose reason someone deleted: keep it.
			reason.Close()
			os.Remove(target + reasonExt)
			continue
		}
		text := fmt.Sprintf("%s\nfix: %s\n", p.what, p.fix(target, filepath.Join(s.Dirs.Spool, name)))
		if s.from != "" {
			// tells `rejected retry` where the file goes back to
			text += "from: " + s.from + "\n"
		}
		_, werr := reason.WriteString(text)
		if werr == nil {
			werr = reason.Sync() // a full disk may only say so here
		}
		if cerr := reason.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			// No file goes to rejected/ without its reason: it stays where
			// it is, and the next pass tries again.
			os.Remove(target + reasonExt)
			return false, fmt.Errorf("reject %s: write %s: %w; the file stays until its reason can be written", shown(name), shown(target+reasonExt), werr)
		}
		if err := os.Rename(src, target); err != nil {
			os.Remove(target + reasonExt)
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			return false, fmt.Errorf("reject %s: %w", shown(name), err)
		}
		s.emit(Event{Kind: EventRejected, File: name, Err: p.what, Path: target + reasonExt})
		return true, nil
	}
	return false, fmt.Errorf("reject %s: 1000 rejected files of that name; clean up %s", shown(name), s.Dirs.Rejected)
}

// rejectedName keeps the original name; the n-th later file of the same
// name becomes stem.n.ext, so that it still ends in .json when moved back.
// A name over maxName bytes keeps its extension and the start of its stem,
// cut at a character's boundary, so that a UTF-8 name stays one, which
// `rejected list --json` gives exactly, and `rejected retry` puts back a
// name the spool ingests.
func rejectedName(name string, n int) string {
	if len(name) > maxName {
		ext := filepath.Ext(name)
		if len(ext) > maxName/2 {
			ext = ""
		}
		cut := maxName - len(ext)
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + ext
	}
	if n == 0 {
		return name
	}
	ext := filepath.Ext(name)
	return fmt.Sprintf("%s.%d%s", strings.TrimSuffix(name, ext), n, ext)
}

// shown is a file name (or path) as a log line or the first line of a
// reason shows it: as it is, unless it holds a control character (a
// newline, an escape sequence) or is not UTF-8; then Go-quoted, so that a
// name can neither break the line in two nor drive the terminal.
func shown(name string) string {
	if !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return strconv.Quote(name)
	}
	return name
}

// ShowName is a file name as a line of text shows it (shown): for the
// commands that name rejected files.
func ShowName(name string) string { return shown(name) }

// moveBack is the fix of a file that only needs editing.
func moveBack(what string) func(rejected, spool string) string {
	return func(rejected, spool string) string {
		return fmt.Sprintf("%s, then move it back: mv %s %s", what, quote(rejected), quote(spool))
	}
}

// invalidProblem explains an error of Parse or of Enqueue.
func invalidProblem(name string, err error) problem {
	fix := moveBack("edit the file as said above")
	var redriven *claim.RedrivenError
	var never *claim.NeverRunsError
	switch {
	case errors.As(err, &redriven):
		// A job of its own would run the command a second time.
		fix = func(rejected, _ string) string {
			return "nothing to do; remove it: queuectl rejected purge " + quote(filepath.Base(rejected))
		}
	case errors.As(err, &never):
		// Another id would make a job that runs without what it waits for.
		fix = neverRunsFix(never)
	case errors.Is(err, claim.ErrConflict):
		fix = moveBack(`give the job another "id", or leave "id" out to get a generated one`)
	}
	return problem{what: shown(name) + ": " + describe(name, err), fix: fix}
}

// neverRunsFix is the fix of a job that would wait for ever for a job that
// cannot complete: re-drive that one first. A job re-driven by its dead/
// file is re-armed by that re-drive, and the file has nothing left to do;
// one whose dependency was removed can only be run as a new job.
func neverRunsFix(e *claim.NeverRunsError) func(rejected, spool string) string {
	b := e.Blocker
	switch {
	case b.State == "":
		return moveBack(fmt.Sprintf(`job %s is gone, so %s can never run; to run its command as a new job that waits for nothing, give it another "id" or leave "id" out`, b.ID, e.Job))
	case e.Job == "":
		return moveBack(fmt.Sprintf("re-drive %s first (%s)", b.ID, e.Redrive()))
	}
	return func(rejected, _ string) string {
		return fmt.Sprintf("re-drive %s first (%s), which re-arms %s; then remove this file: queuectl rejected purge %s",
			b.ID, e.Redrive(), e.Job, quote(filepath.Base(rejected)))
	}
}

// describe is err's message for a reason file, which names the file itself
// and has no use for the sentinel's words ("invalid input: ").
func describe(name string, err error) string {
	what := strings.TrimPrefix(err.Error(), name+": ")
	for _, sentinel := range []error{claim.ErrInvalid, claim.ErrConflict} {
		what = strings.TrimPrefix(what, sentinel.Error()+": ")
	}
	return what
}

func truncatedProblem(name string, settle time.Duration, err error) problem {
	return problem{
		what: fmt.Sprintf("%s: not a complete JSON object, and unchanged for %v (%s)", shown(name), settle, describe(name, err)),
		fix:  moveBack(fmt.Sprintf("finish the JSON object (a writer should write %s.tmp and rename it when done)", name)),
	}
}

func tooBigProblem(name string, size int64) problem {
	return problem{
		what: fmt.Sprintf("%s: the file is %d bytes, over the limit of 1 MiB", shown(name), size),
		fix:  moveBack("keep the job spec small and put large data in a file the command reads"),
	}
}

func longNameProblem(name string) problem {
	return problem{
		what: fmt.Sprintf("%s…: the file name is %d bytes, over the limit of %d", shown(fmt.Sprintf("%.40s", name)), len(name), maxName),
		fix: func(rejected, spool string) string {
			return fmt.Sprintf("it is kept here under a name cut to fit; move it back under that name (queuectl rejected retry %s) or another short one: mv %s %s",
				quote(filepath.Base(rejected)), quote(rejected), quote(filepath.Join(filepath.Dir(spool), filepath.Base(rejected))))
		},
	}
}

func foreignProblem(name string, uid int) problem {
	return problem{
		what: fmt.Sprintf("%s: the file is owned by %s, not by %s who runs this queue; a file someone else wrote is never run as you",
			shown(name), userName(uid), userName(os.Getuid())),
		fix: func(rejected, spool string) string {
			return fmt.Sprintf("if you trust it, copy it as yourself, so that you own the copy: cp %s %s && mv %s %s",
				quote(rejected), quote(spool+".tmp"), quote(spool+".tmp"), quote(spool))
		},
	}
}

// irregularProblem explains a spool entry that is not a regular file.
func irregularProblem(name string, mode fs.FileMode, path string) problem {
	switch {
	case mode&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return problem{
			what: fmt.Sprintf("%s: a symbolic link (to %s); links are never followed, so nobody can make you run a file you did not drop", shown(name), shown(target)),
			fix: func(rejected, spool string) string {
				return fmt.Sprintf("if you trust its target, drop a copy: cp -L %s %s && mv %s %s",
					quote(rejected), quote(spool+".tmp"), quote(spool+".tmp"), quote(spool))
			},
		}
	case mode.IsDir():
		return problem{
			what: shown(name) + ": a directory, not a regular file",
			fix: func(rejected, _ string) string {
				return "only regular *.json files belong in the spool; move " + quote(rejected) + " where you keep directories"
			},
		}
	}
	kind := "a special file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	case mode&fs.ModeDevice != 0:
		kind = "a device"
	}
	return problem{
		what: fmt.Sprintf("%s: %s, not a regular file; it is never opened", shown(name), kind),
		fix: func(rejected, spool string) string {
			return fmt.Sprintf("write the job spec into a regular file and drop that (e.g. as %s), then remove %s",
				quote(spool), quote(rejected))
		},
	}
}

func unreadableProblem(name string, err error) problem {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		err = pe.Err // the path is the private taken one, not the user's
	}
	return problem{
		what: fmt.Sprintf("%s: cannot be read: %v", shown(name), err),
		fix:  moveBack("make it readable (chmod u+r)"),
	}
}

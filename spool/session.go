package spool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// session is one Run or Pass of a Watcher: the private directory it holds
// and what it remembers between passes.
type session struct {
	*Watcher
	own     *ingestDir
	spool   os.FileInfo // the spool directory own is in (recreated.go)
	uid     int
	settle  time.Duration
	writing map[string]bool // names a writer held open at the last pass
	from    string          // the directory rejected files came from, when not the spool
}

// tally is the outcome of one pass.
type tally struct {
	Stats
	wake time.Time // when the earliest waiting file will have settled
}

// add counts u's files in t too.
func (t *tally) add(u tally) {
	t.Ingested += u.Ingested
	t.Duplicates += u.Duplicates
	t.Redriven += u.Redriven
	t.Skipped += u.Skipped
	t.Rejected += u.Rejected
	t.Waiting += u.Waiting
	if !u.wake.IsZero() {
		t.wakeBy(u.wake)
	}
}

func (t *tally) wait(changedAt time.Time, settle time.Duration) {
	t.Waiting++
	t.wakeBy(changedAt.Add(settle))
}

// wakeBy makes the pass's next wake-up at or before at.
func (t *tally) wakeBy(at time.Time) {
	if t.wake.IsZero() || at.Before(t.wake) {
		t.wake = at
	}
}

// taken is a file in the session's own directory, named <key>.<name>.
type taken struct {
	key     string // the ingest key, 32 hex digits
	name    string // the name it had in the spool
	settled bool   // it had stopped changing before it was taken
	// again: found in the own directory, taken before this pass (adopted
	// from an ingester that died, or left by a failed commit), so its job
	// may have been committed already (claim.NewJob.IngestAgain).
	again bool
	// read says that data and changedAt hold what take read, so that load
	// need not open the file again.
	read      bool
	data      []byte
	changedAt time.Time
}

func (tk taken) file() string { return tk.key + "." + tk.name }

// ingestKey is what the database stores for tk: the key alone identifies
// the file; the prefix tells spool keys from any other kind.
func (tk taken) ingestKey() string { return "spool:" + tk.key }

func parseTaken(file string) (taken, bool) {
	key, name, ok := strings.Cut(file, ".")
	if !ok || len(key) != 32 || strings.Trim(key, "0123456789abcdef") != "" || name == "" {
		return taken{}, false
	}
	return taken{key: key, name: name}, true
}

// pass ingests what is in the session's own directory, then what is in the
// spool. adopt first moves in the files of dead ingesters. Bad files are
// rejected, not errors; the error is for what stops the pass, such as a
// failed commit, whose files are then tried again by the next pass.
func (s *session) pass(ctx context.Context, adopt bool) (tally, error) {
	var t tally
	clear(s.writing)
	if adopt {
		n, err := s.own.adopt()
		if err != nil {
			s.logf("adopt files of a stopped ingester: %v", err)
		}
		if n > 0 {
			s.tell(Event{Kind: EventAdopted, Count: n})
		}
	}
	c := s.startCommitter(ctx)
	err := s.collect(ctx, c, &t)
	return t, errors.Join(err, c.close(&t))
}

// collect hands c the files already in the own directory (adopted, still
// waiting, or left by a failed commit), then takes the spool's and hands
// them over too. It stops early when a commit fails.
func (s *session) collect(ctx context.Context, c *committer, t *tally) error {
	files, err := s.own.names()
	if err != nil {
		return err
	}
	for _, f := range files {
		tk, ok := parseTaken(f)
		if !ok {
			// Not named by an ingester; give it a key of its own.
			tk = taken{key: newKey(), name: f}
			if err := os.Rename(filepath.Join(s.own.path, f), filepath.Join(s.own.path, tk.file())); err != nil {
				s.logf("rename %s: %v", shown(f), err)
				continue
			}
		}
		tk.again = true
		if !c.add(tk, t) {
			return nil
		}
	}
	entries, err := os.ReadDir(s.Dirs.Spool)
	if err != nil {
		return fmt.Errorf("list spool: %w", err)
	}
	// Checked after listing, so that a file dropped once the spool turned
	// unsafe is never taken, whenever this pass began.
	if err := CheckSpool(s.Dirs.Spool); err != nil {
		return err
	}
	for _, e := range entries {
		if ctx.Err() != nil {
			break
		}
		if tk, ok := s.take(e, t); ok && !c.add(tk, t) {
			return nil
		}
	}
	return nil
}

// writerPoll is how often a file that a writer still holds open is looked
// at again.
const writerPoll = 500 * time.Millisecond

// take decides about one spool entry: reject it, leave it waiting, leave it
// alone, or take it into the own directory by rename, which is atomic, so
// that of several ingesters exactly one takes it.
func (s *session) take(e fs.DirEntry, t *tally) (taken, bool) {
	name := e.Name()
	if !candidate(name) {
		s.noteIgnored(name)
		return taken{}, false
	}
	path := filepath.Join(s.Dirs.Spool, name)
	if !e.Type().IsRegular() {
		// Decided from the directory entry: a FIFO or device is never opened.
		s.rejectCounted(path, name, irregularProblem(name, e.Type(), path), t)
		return taken{}, false
	}
	if len(name) > maxName {
		s.rejectCounted(path, name, longNameProblem(name), t)
		return taken{}, false
	}
	f, err := openSpecFile(path)
	if errors.Is(err, fs.ErrPermission) {
		s.rejectCounted(path, name, unreadableProblem(name, err), t)
		return taken{}, false
	}
	if err != nil {
		return taken{}, false // gone, or replaced since listed: the next pass decides
	}
	defer f.Close()
	fi, err := f.stat()
	if err != nil || !fi.regular {
		return taken{}, false
	}
	if fi.uid != s.uid {
		s.rejectCounted(path, name, foreignProblem(name, fi.uid), t)
		return taken{}, false
	}
	changedAt := fi.changed
	if writing, _ := f.openForWriting(); writing {
		// A writer still has it open: however long it pauses, the file
		// is not done, nor is its size known: one already over MaxSize
		// is rejected once closed, with the size it ended at, rather than
		// taken from under its writer. Looked at again shortly; its
		// writes are no hint meanwhile.
		s.writing[name] = true
		t.Waiting++
		t.wakeBy(time.Now().Add(writerPoll))
		return taken{}, false
	}
	if fi.size > MaxSize {
		if now, err := f.stat(); err == nil {
			fi.size = now.size // what a writer closed since the first look left
		}
		s.rejectCounted(path, name, tooBigProblem(name, fi.size), t)
		return taken{}, false
	}
	settled := time.Since(changedAt) >= s.settle
	// Read now, through the descriptor that follows the file into the own
	// directory: load need not open it again.
	data, err := f.read(fi.size)
	if err != nil {
		return taken{}, false // the next pass decides
	}
	if !settled && !complete(data) && !broken(data) {
		// Taking a file still being written would break a writer that
		// appends by name, so an incomplete file is only looked at. A
		// broken one no writer could finish is taken, to be rejected.
		t.wait(changedAt, s.settle)
		return taken{}, false
	}
	tk := taken{key: newKey(), name: name, settled: settled, read: true, data: data, changedAt: changedAt}
	// syscall.Rename, not os.Rename: the target is a fresh name, and
	// os.Rename would first Lstat it.
	if err := syscall.Rename(path, filepath.Join(s.own.path, tk.file())); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.logf("take %s: %v", shown(name), err)
		}
		return taken{}, false
	}
	return tk, true
}

// specInfo is what take needs of an opened spool file's status.
type specInfo struct {
	regular bool
	uid     int
	size    int64
	changed time.Time // see changed
}

// checkFile finds what makes a regular file of owner uid and size bytes
// unacceptable before it is read.
func (s *session) checkFile(name string, uid int, size int64) (problem, bool) {
	if uid != s.uid {
		return foreignProblem(name, uid), true
	}
	if size > MaxSize {
		return tooBigProblem(name, size), true
	}
	return problem{}, false
}

func (s *session) rejectCounted(path, name string, p problem, t *tally) {
	ok, err := s.reject(path, name, p)
	if ok {
		t.Rejected++
	}
	if err != nil {
		s.logf("%v", err)
	}
}

// noteIgnored logs, once per name, a file that is not even a candidate, so
// that a user who dropped "job" instead of "job.json" learns why.
func (s *session) noteIgnored(name string) {
	if ignored(name) || !s.firstIgnored(name) {
		return
	}
	s.tell(Event{Kind: EventIgnored, File: name})
}

// firstIgnored reports whether name is to be said ignored now: the first
// time w meets it.
func (w *Watcher) firstIgnored(name string) bool {
	w.ignoredMu.Lock()
	defer w.ignoredMu.Unlock()
	if w.ignored[name] {
		return false
	}
	if w.ignored == nil || len(w.ignored) > 10000 {
		w.ignored = map[string]bool{}
	}
	w.ignored[name] = true
	return true
}

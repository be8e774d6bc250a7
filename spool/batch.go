package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A batch is committed in one transaction when it holds batchSize files,
// or batchBytes of their content: one fsync of the database per batch, not
// per file, with a bound on the memory a burst of large files holds. A
// pass's first batch holds firstBatch files, and each next one twice as
// many up to batchSize.
const (
	batchSize  = 512
	batchBytes = 32 << 20
	firstBatch = 32
)

// commitTimeout bounds the commit of a taken batch after ctx ended.
const commitTimeout = 30 * time.Second

// committer loads and commits batches of taken files in the background,
// so that taking the next batch overlaps the commit of this one, and the
// commit overlaps the removal of the files of the one before: taking is
// mostly renames, committing mostly SQLite, and a machine with two cores
// runs them at the same time. Its goroutines count what they did in
// tallies of their own, which close adds to the pass's.
type committer struct {
	s         *session
	ctx       context.Context
	batch     parsed
	bytes     int
	size      int            // files that fill this batch: up to batchSize
	batches   chan parsed    // to the commit goroutine
	committed chan committed // to the removal goroutine
	done      chan struct{}  // closed when both goroutines ended
	failed    atomic.Bool
	// The goroutines' own until done is closed:
	finishes tally
	err      error // of the first failed commit
}

// parsed is a batch of taken files and the jobs they ask for.
type parsed struct {
	taken []taken
	jobs  []claim.NewJob
}

// committed is a batch of parsed files with what the store did with each.
type committed struct {
	batch   []taken
	results []claim.Result
}

func (s *session) startCommitter(ctx context.Context) *committer {
	c := &committer{s: s, ctx: ctx, size: firstBatch, batches: make(chan parsed),
		committed: make(chan committed, 1), done: make(chan struct{})}
	go c.commitAll()
	go c.finishAll()
	return c
}

func (c *committer) commitAll() {
	defer close(c.committed)
	for batch := range c.batches {
		if c.err != nil {
			continue // the files stay in the own directory for the next pass
		}
		results, err := c.s.commit(c.ctx, batch.jobs)
		if err != nil {
			c.err = err
			c.failed.Store(true)
			continue
		}
		c.committed <- committed{batch.taken, results}
	}
}

func (c *committer) finishAll() {
	defer close(c.done)
	for cb := range c.committed {
		for i, r := range cb.results {
			c.s.finish(cb.batch[i], r, &c.finishes)
		}
	}
}

// add parses a taken file into the batch (or rejects it, or leaves it
// waiting), and hands the batch over when it is full. It returns false
// once a commit has failed: the pass should stop taking. Parsing here
// rather than in the commit goroutine shares the CPU more evenly between
// the two.
func (c *committer) add(tk taken, t *tally) bool {
	if nj, ok := c.s.load(tk, t); ok {
		c.bytes += len(tk.data)
		tk.data = nil // parsed: only the name is needed now
		c.batch.taken, c.batch.jobs = append(c.batch.taken, tk), append(c.batch.jobs, nj)
	}
	if len(c.batch.jobs) >= c.size || c.bytes >= batchBytes {
		c.flush()
		// The first batches are small, so that the commit and the removal
		// start early; later ones are large, to commit fewer times.
		c.size = min(2*c.size, batchSize)
	}
	return !c.failed.Load()
}

// flush hands the batch to the commit goroutine, waiting while it commits
// the one before.
func (c *committer) flush() {
	if len(c.batch.jobs) > 0 {
		c.batches <- c.batch
		c.batch, c.bytes = parsed{}, 0
	}
}

// close commits what is queued, waits for the goroutines, adds their
// tallies to t and returns the error of the first failed commit.
func (c *committer) close(t *tally) error {
	c.flush()
	close(c.batches)
	<-c.done
	t.add(c.finishes)
	return c.err
}

// commit stores the jobs of a batch of taken files in one transaction and
// returns what became of each; then their files may be removed.
func (s *session) commit(ctx context.Context, jobs []claim.NewJob) ([]claim.Result, error) {
	// The takes must be durable before the commit: a power loss must not
	// bring back, under its old name and without its key, a file whose job
	// is committed. (Leftovers may be takes whose sync failed last time.)
	if err := s.own.sync(); err != nil {
		return nil, err
	}
	if err := syncDir(s.Dirs.Spool); err != nil {
		return nil, err
	}
	// Commit a taken batch even when ctx ended meanwhile, so that a stopping
	// watcher leaves no taken files behind.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	results, err := s.Store.EnqueueEach(cctx, jobs)
	if err != nil {
		return nil, fmt.Errorf("ingest %d spool files: %w", len(jobs), err)
	}
	return results, nil
}

// load parses a taken file, read by take or, for a file found in the own
// directory, read now. ok is false when the file was rejected or is still
// waiting.
func (s *session) load(tk taken, t *tally) (nj claim.NewJob, ok bool) {
	path := filepath.Join(s.own.path, tk.file())
	data, changedAt := tk.data, tk.changedAt
	if !tk.read {
		if data, changedAt, ok = s.readTaken(path, tk.name, t); !ok {
			return nj, false
		}
	}
	nj, err := Parse(tk.name, data)
	if err != nil && len(data) <= MaxSize {
		// Look again before rejecting: a reason must never describe a
		// file that has become valid since, or is still being written.
		if f, ferr := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0); ferr == nil {
			writing, _ := openForWriting(f)
			fi, serr := f.Stat()
			var again []byte
			if serr == nil && !writing {
				again, serr = readSpec(f, fi.Size())
			}
			f.Close()
			switch {
			case writing:
				t.Waiting++
				t.wakeBy(time.Now().Add(writerPoll))
				return nj, false
			case serr == nil && !bytes.Equal(again, data):
				data, changedAt, tk.settled = again, changed(fi), false
				nj, err = Parse(tk.name, data)
			}
		}
	}
	switch {
	case err == nil:
		nj.IngestKey, nj.IngestAgain = tk.ingestKey(), tk.again
		return nj, true
	case len(data) > MaxSize:
		s.rejectCounted(path, tk.name, tooBigProblem(tk.name, int64(len(data))), t)
	case complete(data) || broken(data):
		s.rejectCounted(path, tk.name, invalidProblem(tk.name, err), t)
	case !tk.settled && time.Since(changedAt) < s.settle:
		t.wait(changedAt, s.settle)
	default:
		s.rejectCounted(path, tk.name, truncatedProblem(tk.name, s.settle, err), t)
	}
	return nj, false
}

// readTaken reads a file of the own directory. ok is false when the file
// was rejected or could not be read.
func (s *session) readTaken(path, name string, t *tally) (data []byte, changedAt time.Time, ok bool) {
	// Nobody else renames in the own directory, so what Lstat says is what
	// gets opened: a FIFO or device is never opened.
	fi, err := os.Lstat(path)
	if err != nil {
		s.logf("read %s: %v", shown(name), err)
		return nil, changedAt, false
	}
	if !fi.Mode().IsRegular() {
		s.rejectCounted(path, name, irregularProblem(name, fi.Mode(), path), t)
		return nil, changedAt, false
	}
	if p, bad := s.checkFile(name, owner(fi), fi.Size()); bad {
		s.rejectCounted(path, name, p, t)
		return nil, changedAt, false
	}
	data, err = readFile(path, fi.Size())
	if errors.Is(err, fs.ErrPermission) {
		s.rejectCounted(path, name, unreadableProblem(name, err), t)
		return nil, changedAt, false
	}
	if err != nil {
		s.logf("read %s: %v", shown(name), err)
		return nil, changedAt, false
	}
	return data, changed(fi), true
}

// finish acts on what the store did with a committed file's job.
func (s *session) finish(tk taken, r claim.Result, t *tally) {
	path := filepath.Join(s.own.path, tk.file())
	if r.Err != nil {
		s.rejectCounted(path, tk.name, invalidProblem(tk.name, r.Err), t)
		return
	}
	switch r.Outcome {
	case claim.Created:
		t.Ingested++
		s.emit(Event{Kind: EventIngested, File: tk.name, Job: r.Job.ID})
	case claim.Duplicate:
		t.Duplicates++
		s.tell(Event{Kind: EventRecovered, File: tk.name, Job: r.Job.ID})
	case claim.Redriven:
		t.Redriven++
		s.emit(Event{Kind: EventRedriven, File: tk.name, Job: r.Job.ID, Rearmed: r.Rearmed.Waiting, Left: r.Rearmed.Left})
		if err := RemoveDead(s.Dirs.Dead, r.Job.ID); err != nil {
			s.logf("%v", err)
		}
	case claim.Skipped:
		t.Skipped++
		s.emit(Event{Kind: EventSkipped, File: tk.name, Job: r.Job.ID, Key: r.Job.UniqueKey, State: string(r.Job.State)})
	default:
		s.logf("%s: the store answered %q; leaving the file for the next pass", shown(tk.name), r.Outcome)
		return
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// The job is committed; the next pass finds the file a Duplicate.
		s.logf("remove ingested %s: %v", shown(tk.name), err)
	}
}

func readFile(path string, size int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSpec(f, size)
}

// readSpec reads at most MaxSize+1 bytes: enough to see that a file is too
// big without reading all of it. size is a hint.
func readSpec(r io.Reader, size int64) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(min(max(size, 0), MaxSize)) + bytes.MinRead)
	_, err := buf.ReadFrom(io.LimitReader(r, MaxSize+1))
	return buf.Bytes(), err
}

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
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// batchSize is how many files one transaction ingests. Batches make
// ingestion fast: one fsync of the database per batch, not per file.
const batchSize = 512

// commitTimeout bounds the commit of a taken batch after ctx ended.
const commitTimeout = 30 * time.Second

// ingest reads, parses and commits a batch of taken files in one
// transaction, then removes the files whose jobs are committed.
func (s *session) ingest(ctx context.Context, batch []taken, t *tally) error {
	if len(batch) == 0 {
		return nil
	}
	// The takes must be durable before the commit: a power loss must not
	// bring back, under its old name and without its key, a file whose job
	// is committed. (Leftovers may be takes whose sync failed last time.)
	if err := s.own.sync(); err != nil {
		return err
	}
	if err := syncDir(s.Dirs.Spool); err != nil {
		return err
	}
	jobs := make([]claim.NewJob, 0, len(batch))
	ready := make([]taken, 0, len(batch))
	for _, tk := range batch {
		if nj, ok := s.load(tk, t); ok {
			jobs, ready = append(jobs, nj), append(ready, tk)
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	// Commit a taken batch even when ctx ended meanwhile, so that a stopping
	// watcher leaves no taken files behind.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	results, err := s.Store.EnqueueEach(cctx, jobs)
	if err != nil {
		return fmt.Errorf("ingest %d spool files: %w", len(jobs), err)
	}
	for i, r := range results {
		s.finish(ready[i], r, t)
	}
	return nil
}

// load reads and parses a taken file. ok is false when the file was
// rejected or is still waiting.
func (s *session) load(tk taken, t *tally) (nj claim.NewJob, ok bool) {
	path := filepath.Join(s.own.path, tk.file())
	// Nobody else renames in the own directory, so what Lstat says is what
	// gets opened: a FIFO or device is never opened.
	fi, err := os.Lstat(path)
	if err != nil {
		s.logf("read %s: %v", tk.name, err)
		return nj, false
	}
	if !fi.Mode().IsRegular() {
		s.rejectCounted(path, tk.name, irregularProblem(tk.name, fi.Mode(), path), t)
		return nj, false
	}
	if p, bad := s.checkFile(tk.name, fi); bad {
		s.rejectCounted(path, tk.name, p, t)
		return nj, false
	}
	data, err := readFile(path, fi.Size())
	if errors.Is(err, fs.ErrPermission) {
		s.rejectCounted(path, tk.name, unreadableProblem(tk.name, err), t)
		return nj, false
	}
	if err != nil {
		s.logf("read %s: %v", tk.name, err)
		return nj, false
	}
	nj, err = Parse(tk.name, data)
	switch {
	case err == nil:
		nj.IngestKey = tk.ingestKey()
		return nj, true
	case len(data) > MaxSize:
		s.rejectCounted(path, tk.name, tooBigProblem(tk.name, int64(len(data))), t)
	case complete(data):
		s.rejectCounted(path, tk.name, invalidProblem(tk.name, err), t)
	case !tk.settled && time.Since(changed(fi)) < s.settle:
		t.wait(changed(fi), s.settle)
	default:
		s.rejectCounted(path, tk.name, truncatedProblem(tk.name, s.settle, err), t)
	}
	return nj, false
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
		s.logf("ingested %s as job %s", tk.name, r.Job.ID)
	case claim.Duplicate:
		t.Duplicates++
		s.logf("%s was ingested as job %s before an ingester stopped; removing the file", tk.name, r.Job.ID)
	case claim.Redriven:
		t.Redriven++
		s.logf("%s re-drove dead job %s", tk.name, r.Job.ID)
		if err := RemoveDead(s.Dirs.Dead, r.Job.ID); err != nil {
			s.logf("%v", err)
		}
	case claim.Skipped:
		t.Skipped++
		s.logf("skipped %s: job %s with unique_key %q is still %s", tk.name, r.Job.ID, r.Job.UniqueKey, r.Job.State)
	default:
		s.logf("%s: the store answered %q; leaving the file for the next pass", tk.name, r.Outcome)
		return
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// The job is committed; the next pass finds the file a Duplicate.
		s.logf("remove ingested %s: %v", tk.name, err)
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
	buf.Grow(int(min(size, MaxSize)) + bytes.MinRead)
	_, err := buf.ReadFrom(io.LimitReader(r, MaxSize+1))
	return buf.Bytes(), err
}

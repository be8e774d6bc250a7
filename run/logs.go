package run

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// output carries one stream of a run, stdout or stderr, from the job to its
// log file. The job writes into a pipe and a goroutine of the worker copies
// what arrives to the file as it arrives (logs -f sees it at once, and no
// output is held in memory beyond one read). The file, and the job's log
// directory, are created on the first byte: a stream that printed nothing
// leaves no file, and a job that printed nothing no directory. Creating
// them for every run cost three inodes per job and, on ext4 with recently
// deleted inodes nearby, up to milliseconds; a pipe costs no inode at all.
type output struct {
	path string
	r, w *os.File // w is the job's end: the worker closes its copy once the job started
	done chan struct{}
	err  error // the first failure to create or write the file; read after done
}

// outputGrace bounds how long a run's end waits for the rest of its output
// once the job's shell has exited: a background process still holding the
// pipe would hold the run open forever. What it writes later is lost (it
// gets EPIPE), as nothing a job starts may outlive its run.
const outputGrace = 200 * time.Millisecond

// newOutput opens the pipe of a stream that logs to path and starts copying.
func newOutput(path string) (*output, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("open log pipe: %w", err)
	}
	o := &output{path: path, r: r, w: w, done: make(chan struct{})}
	go o.copy()
	return o, nil
}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copy moves the pipe's bytes to the file until EOF (every writer closed)
// or the read deadline that finish sets. When the file cannot be created or
// written, it keeps reading and drops the bytes, so the job neither blocks
// nor dies of a broken pipe; finish reports the failure.
func (o *output) copy() {
	defer close(o.done)
	defer o.r.Close()
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	for {
		n, rerr := o.r.Read(*buf)
		if n > 0 && o.err == nil {
			if f == nil {
				f, o.err = createLog(o.path)
			}
			if o.err == nil {
				if _, err := f.Write((*buf)[:n]); err != nil {
					o.err = fmt.Errorf("write log: %w", err)
				}
			}
		}
		if rerr != nil {
			return
		}
	}
}

// finish waits, after the job's shell has exited, for the rest of the
// stream, at most outputGrace, and reports whether the log could be written.
func (o *output) finish() error {
	o.w.Close()
	o.r.SetReadDeadline(time.Now().Add(outputGrace)) // os.Pipe's read end is pollable on Linux
	<-o.done
	return o.err
}

// createLog creates a run's log file, and the job's log directory if this
// is its first. It follows no symlink at the file.
func createLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	if err := realDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create log: %w", err)
	}
	return f, nil
}

// Copy writes the log file at path to w. A stream that printed nothing (so
// far) has no file: that is an empty log, not an error.
func Copy(w io.Writer, path string) error {
	f, err := openLog(path)
	if f == nil {
		return err
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
			if f, err = openLog(path); err != nil {
				return err
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

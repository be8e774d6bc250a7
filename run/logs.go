package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	// last keeps the stream's last TailBytes as they pass, for the store:
	// read after done. It is kept also when the file cannot be written.
	last ring
	// tee, when set, gets each part for the file, with its offset there,
	// just before it is written there (Worker.Output): a part the job's
	// other stream wrote after it (having seen it in the file) comes after.
	tee     func(off int64, p []byte)
	written int64
}

// outputGrace bounds how long a run's end waits for the rest of its output
// once the job's shell has exited: a background process still holding the
// pipe would hold the run open forever. What it writes later is lost (it
// gets EPIPE), as nothing a job starts may outlive its run.
const outputGrace = 200 * time.Millisecond

// newOutput opens the pipe of a stream that logs to path and starts copying.
func newOutput(path string) (*output, error) {
	r, w, err := jobPipe()
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
		if n > 0 {
			o.last.write((*buf)[:n])
		}
		if n > 0 && o.err == nil {
			if f == nil {
				f, o.err = createLog(o.path)
			}
			if o.err == nil {
				if o.tee != nil {
					o.tee(o.written, (*buf)[:n])
				}
				if _, err := f.Write((*buf)[:n]); err != nil {
					o.err = fmt.Errorf("write log: %w", err)
				}
				o.written += int64(n)
			}
		}
		if rerr != nil {
			return
		}
	}
}

// finish waits, after the job's shell has exited, for the rest of the
// stream, at most outputGrace, and reports whether the log could be written.
// The stream's tail is ready once it returns.
func (o *output) finish() error {
	o.w.Close()
	o.r.SetReadDeadline(time.Now().Add(outputGrace)) // jobPipe's read end is pollable on Linux
	<-o.done
	return o.err
}

// tails is what two finished streams kept, for the store.
func tails(stdout, stderr *output) *claim.Tails {
	return &claim.Tails{Stdout: stdout.last.tail(), Stderr: stderr.last.tail()}
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

// ReadTail reads the end of the log file at path as the store keeps it: its
// last claim.TailBytes and its size. A stream that printed nothing (no file)
// has an empty tail.
func ReadTail(path string) (claim.Tail, error) {
	f, err := openLog(path)
	if f == nil {
		return claim.Tail{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return claim.Tail{}, fmt.Errorf("read log: %w", err)
	}
	from := max(0, fi.Size()-claim.TailBytes)
	data := make([]byte, fi.Size()-from)
	n, err := f.ReadAt(data, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return claim.Tail{}, fmt.Errorf("read log: %w", err)
	}
	if n == 0 {
		data = nil
	}
	return claim.Tail{Data: data[:n], Size: from + int64(n)}, nil
}

// readTails reads both streams' tails of a run from its files, nil when
// either cannot be read.
func readTails(r claim.Run) *claim.Tails {
	stdout, err := ReadTail(r.StdoutPath)
	if err != nil {
		return nil
	}
	stderr, err := ReadTail(r.StderrPath)
	if err != nil {
		return nil
	}
	return &claim.Tails{Stdout: stdout, Stderr: stderr}
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

// Log is one stream of one run as this host reads it: from the log file
// when the run ran here (HostID) and the file is there, else from the tail
// the store kept with the run (SPEC §9: logs from any host). A run of
// another host is never read from a local file of the same path: that file,
// if any, belongs to another run of a job of the same id.
type Log struct {
	Run    claim.Run // from claim.Store.RunsWithTails, for the tail's bytes
	Stderr bool      // stderr, else stdout
}

// Origin is where a Log's text came from.
type Origin int

const (
	// FromFile: the log file here (none: the stream printed nothing, and
	// made no file, here or on the run's host).
	FromFile Origin = iota
	// FromTail: the tail kept with the run, which ran on another host or
	// whose file is gone (removed by hand, or by a clean-up outside queuectl).
	FromTail
	// FromNowhere: the run ran on another host and nothing was kept: it
	// has not ended yet, or was lost there.
	FromNowhere
)

// Name is "stdout" or "stderr".
func (l Log) Name() string {
	if l.Stderr {
		return "stderr"
	}
	return "stdout"
}

// Path is the log file on the run's host.
func (l Log) Path() string {
	if l.Stderr {
		return l.Run.StderrPath
	}
	return l.Run.StdoutPath
}

// Where names the log file for people on any host: hostname:path.
func (l Log) Where() string { return l.Run.HostName() + ":" + l.Path() }

// Elsewhere reports whether the run ran on another host than this one.
func (l Log) Elsewhere() bool { return l.Run.Host != HostID() }

// Kept is the tail the store kept of the stream, nil when none.
func (l Log) Kept() *claim.Tail {
	if l.Run.Tails == nil {
		return nil
	}
	if l.Stderr {
		return &l.Run.Tails.Stderr
	}
	return &l.Run.Tails.Stdout
}

// Open returns the stream's text from where this host can read it, and
// says from where; the caller closes it. A stream that printed nothing, or
// a run of another host that kept nothing, reads as empty.
func (l Log) Open() (io.ReadCloser, Origin, error) {
	kept := l.Kept()
	if l.Elsewhere() {
		switch {
		case kept == nil:
			return io.NopCloser(strings.NewReader("")), FromNowhere, nil
		case kept.Size == 0: // as here: no file to name there
			return io.NopCloser(strings.NewReader("")), FromFile, nil
		}
		return io.NopCloser(bytes.NewReader(kept.Data)), FromTail, nil
	}
	f, err := openLog(l.Path())
	switch {
	case err != nil:
		return nil, FromFile, err
	case f != nil:
		return f, FromFile, nil
	case kept != nil && kept.Size > 0:
		// No file, yet the stream printed: the file was removed since.
		return io.NopCloser(bytes.NewReader(kept.Data)), FromTail, nil
	}
	return io.NopCloser(strings.NewReader("")), FromFile, nil
}

// Origin says where Open would read the stream from.
func (l Log) Origin() Origin {
	rc, from, err := l.Open()
	if err == nil {
		rc.Close()
	}
	return from
}

package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
)

// Following. A `queuectl run` hands its job over with Run instead of
// Enqueue: once the job is stored (the same group commit), the worker keeps
// the connection and writes the job's runs back on it, as frames of one
// JSON line each: output as it is written, each run's start and end, and
// the job once it is finished. The client may write lines back:
// CancelLine to cancel the job, StopLine and ContLine to stop its running
// processes and let them go on (Ctrl-Z); closing the connection leaves the
// job to run. When the worker stops before the job is finished, its last frame
// says so (Handover), and the client follows the job in the store itself.

// Stream is a job handed over with Run: its runs come back on it.
type Stream struct {
	conn  *os.File // a socket in the runtime's poller, for deadlines
	r     *bufio.Reader
	part  []byte   // a frame read in part when a read was interrupted
	brief bool     // RunBrief's: frames read with parseFrame
	Job   jobs.Job // the job as stored
	// Outcome is the store's answer to the enqueue: Created, or Skipped
	// when a live job holds the same unique key (Job is that one).
	Outcome jobs.Outcome
}

// Run hands nj to the worker serving the socket at path, as Enqueue does,
// and asks it to follow the job: read its runs with Next. environ is the
// caller's environment: the job carries what of it the worker's Server.Env
// keeps, and nj.Env (the explicit values) over it. Errors as Enqueue's;
// the worker declines a job of a queue it does not serve.
func Run(path, db string, nj jobs.NewJob, environ map[string]string) (*Stream, error) {
	return follow(path, db, nj, environ, false)
}

// RunBrief is Run for a caller that needs only the fields of the job, its
// runs and its queue that frame.go names: it reads the answer and the
// frames without encoding/json.
func RunBrief(path, db string, nj jobs.NewJob, environ map[string]string) (*Stream, error) {
	return follow(path, db, nj, environ, true)
}

func follow(path, db string, nj jobs.NewJob, environ map[string]string, brief bool) (*Stream, error) {
	if !isMySocket(path) {
		return nil, ErrDeclined
	}
	c, err := dial(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	c.SetDeadline(time.Now().Add(answerTimeout))
	req := Request{Fingerprint: Fingerprint(true), DB: db, Job: nj, Follow: true, Environ: environ}
	var a Answer[jobs.Job]
	decode := func(line []byte) error { return json.Unmarshal(line, &a) }
	if brief {
		decode = func(line []byte) error { return parseRunAnswer(line, &a) }
	}
	// A follow's frames carry the job's output.
	r, err := ask(c, req, 64<<10, decode, &a.Declined, &a.Unknown)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return &Stream{conn: c, r: r, brief: brief, Job: a.Job, Outcome: a.Outcome}, nil
}

// Next reads the next frame and gives it to feed; it returns the job once
// it is finished, with done true. Errors: ErrHandover (follow the job in
// the store), or the connection's.
func (s *Stream) Next(feed Feed) (j jobs.Job, done bool, err error) {
	line, err := readLine(s.r, &s.part)
	if err != nil {
		return jobs.Job{}, false, fmt.Errorf("%w: %w", ErrHandover, err)
	}
	var fr Frame
	if s.brief {
		err = parseFrame(line, &fr)
	} else {
		err = json.Unmarshal(line, &fr)
	}
	if err != nil {
		return jobs.Job{}, false, fmt.Errorf("%w: %v", ErrHandover, err)
	}
	switch {
	case fr.End != nil:
		return *fr.End, true, nil
	case fr.Handover != "":
		return jobs.Job{}, false, fmt.Errorf("%w: %s", ErrHandover, fr.Handover)
	case fr.Event != nil:
		feed.Event(*fr.Event)
	case fr.Waiting != nil:
		feed.Waiting(*fr.Waiting)
	case fr.Paused != "":
		feed.Paused(fr.Paused)
	case fr.Stalled != nil:
		feed.Stalled(*fr.Stalled)
	case fr.Stdout != nil:
		_, err = feed.Stdout.Write(fr.Stdout)
	case fr.Stderr != nil:
		_, err = feed.Stderr.Write(fr.Stderr)
	}
	return jobs.Job{}, false, err
}

// Cancel asks the worker to cancel the job; its end still comes by Next.
func (s *Stream) Cancel() error {
	_, err := s.conn.Write([]byte(CancelLine))
	return err
}

// Suspend stops the job's running processes, as Ctrl-Z stops a command's,
// until Continue (or Close).
func (s *Stream) Suspend() error {
	_, err := s.conn.Write([]byte(StopLine))
	return err
}

// Continue lets the processes Suspend stopped go on.
func (s *Stream) Continue() error {
	_, err := s.conn.Write([]byte(ContLine))
	return err
}

// Interrupt makes a Next that waits, or the next one, return at once.
func (s *Stream) Interrupt() { s.conn.SetReadDeadline(time.Now()) }

// InterruptWhen interrupts Next when ctx ends, until the returned function
// is called; that function returns once an interrupt that began is done,
// so that a Resume after it is never undone by it.
func (s *Stream) InterruptWhen(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	unwatch := context.AfterFunc(ctx, func() {
		defer close(done)
		s.Interrupt()
	})
	return func() {
		if !unwatch() {
			<-done
		}
	}
}

// Resume lets Next wait again, for at most d (0: for ever).
func (s *Stream) Resume(d time.Duration) {
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	s.conn.SetReadDeadline(t)
}

// Close hangs up: a job not canceled runs on.
func (s *Stream) Close() error { return s.conn.Close() }

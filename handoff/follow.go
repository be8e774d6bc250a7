package handoff

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
)

// Following. A `queuectl run` hands its job over with Run instead of
// Enqueue: once the job is stored (the same group commit), the worker keeps
// the connection and writes the job's runs back on it, as frames of one
// JSON line each: output as it is written, each run's start and end, and
// the job once it is finished. The client may write one line back,
// "cancel", to cancel the job; closing the connection leaves the job to
// run. When the worker stops before the job is finished, its last frame
// says so (Handover), and the client follows the job in the store itself.

// ErrHandover means the worker that followed the job stopped before it was
// finished: the caller follows it in the store.
var ErrHandover = errors.New("handoff: the worker stopped following the job")

// Event is a run of the followed job that started (Ended false) or ended,
// with the job as it was just after.
type Event struct {
	Job   jobs.Job
	Run   jobs.Run
	Ended bool
}

// Feed is where a Server's Follow writes a job's runs. Its methods are
// called from the one goroutine that runs Follow.
type Feed struct {
	Stdout, Stderr io.Writer
	// Event tells of a run's start or end.
	Event func(Event)
	// Waiting tells that the job waits for a slot of its queue q.
	Waiting func(q jobs.Queue)
}

// frame is one line from worker to client.
type frame struct {
	Stdout   []byte      `json:",omitempty"`
	Stderr   []byte      `json:",omitempty"`
	Event    *Event      `json:",omitempty"`
	Waiting  *jobs.Queue `json:",omitempty"`
	End      *jobs.Job   `json:",omitempty"` // the job, finished: the last frame
	Handover string      `json:",omitempty"` // why the worker stops following: the last frame
}

// cancelLine is the client's one line: cancel the job.
const cancelLine = "cancel\n"

// frames writes frames to a connection; a write error ends the follow.
type frames struct {
	conn   *net.UnixConn
	cancel context.CancelFunc
	err    error
}

func (f *frames) write(fr frame) error {
	if f.err != nil {
		return f.err
	}
	data, err := encode(fr)
	if err == nil {
		_, err = f.conn.Write(data)
	}
	if err != nil {
		f.err = err
		f.cancel()
	}
	return err
}

type streamWriter struct {
	f      *frames
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	fr := frame{Stdout: p}
	if w.stderr {
		fr = frame{Stderr: p}
	}
	if err := w.f.write(fr); err != nil {
		return 0, err
	}
	return len(p), nil
}

// follow streams job j's runs to conn until it is finished, the client
// hangs up, or ctx (the server's) ends.
func (s *Server) follow(ctx context.Context, conn *net.UnixConn, r *bufio.Reader, j jobs.Job) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn.SetDeadline(time.Time{})
	// Once ctx ends, the reader stops at once, and a client that reads no
	// more holds the last frames for a second at most.
	stop := context.AfterFunc(ctx, func() {
		conn.SetReadDeadline(time.Now())
		conn.SetWriteDeadline(time.Now().Add(time.Second))
	})
	defer stop()
	var reading sync.WaitGroup
	reading.Add(1)
	go func() {
		defer reading.Done()
		s.readCancel(ctx, r, j.ID, cancel)
	}()
	out := &frames{conn: conn, cancel: cancel}
	// The client has the job's environment: the frames leave it out.
	feed := Feed{Stdout: streamWriter{out, false}, Stderr: streamWriter{out, true},
		Event:   func(e Event) { e.Job.Env = nil; out.write(frame{Event: &e}) },
		Waiting: func(q jobs.Queue) { out.write(frame{Waiting: &q}) }}
	end, err := s.Follow(ctx, j, feed)
	switch {
	case err == nil:
		end.Env = nil
		out.write(frame{End: &end})
	case out.err == nil:
		out.write(frame{Handover: err.Error()})
	}
	cancel()
	reading.Wait()
}

// readCancel reads the client's line: "cancel" cancels the job, and the
// follow goes on to its end; a hang-up ends the follow.
func (s *Server) readCancel(ctx context.Context, r *bufio.Reader, id string, hangUp context.CancelFunc) {
	line, err := r.ReadString('\n')
	if err != nil || line != cancelLine {
		if ctx.Err() == nil {
			hangUp()
		}
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, _, err := s.Store.Cancel(cctx, id); err != nil && !errors.Is(err, jobs.ErrConflict) {
		s.logf("enqueue socket: cancel job %s: %v", id, err)
	}
}

// Stream is a job handed over with Run: its runs come back on it.
type Stream struct {
	conn *net.UnixConn
	r    *bufio.Reader
	part []byte   // a frame read in part when a read was interrupted
	Job  jobs.Job // the job as stored
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
	conn, a, err := hand[jobs.Job](request{DB: db, Job: nj, Follow: true, Environ: environ}, path)
	if err != nil {
		return nil, err
	}
	return &Stream{conn: conn.conn, r: conn.r, Job: a.Job, Outcome: a.Outcome}, nil
}

// Next reads the next frame and gives it to feed; it returns the job once
// it is finished, with done true. Errors: ErrHandover (follow the job in
// the store), or the connection's.
func (s *Stream) Next(feed Feed) (j jobs.Job, done bool, err error) {
	line, err := readLine(s.r, &s.part)
	if err != nil {
		return jobs.Job{}, false, fmt.Errorf("%w: %w", ErrHandover, err)
	}
	var fr frame
	if err := json.Unmarshal(line, &fr); err != nil {
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
	case fr.Stdout != nil:
		_, err = feed.Stdout.Write(fr.Stdout)
	case fr.Stderr != nil:
		_, err = feed.Stderr.Write(fr.Stderr)
	}
	return jobs.Job{}, false, err
}

// Cancel asks the worker to cancel the job; its end still comes by Next.
func (s *Stream) Cancel() error {
	_, err := s.conn.Write([]byte(cancelLine))
	return err
}

// Interrupt makes a Next that waits, or the next one, return at once.
func (s *Stream) Interrupt() { s.conn.SetReadDeadline(time.Now()) }

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

// conn is a connection whose answer was read, with what came after it.
type conn struct {
	conn *net.UnixConn
	r    *bufio.Reader
}

// hand sends one request and reads the worker's answer; with follow, the
// connection stays open for the frames and is returned.
func hand[J any](req request, path string) (conn, answer[J], error) {
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSocket || !ownedByMe(fi) {
		return conn{}, answer[J]{}, ErrDeclined
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return conn{}, answer[J]{}, ErrDeclined
	}
	req.Fingerprint = fingerprint(req.Follow)
	a, r, err := ask[J](c, req)
	if err != nil || !req.Follow {
		c.Close()
		return conn{}, a, err
	}
	return conn{c, r}, a, nil
}

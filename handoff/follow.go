package handoff

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
	"github.com/queuectl/queuectl/handoff/wire"
)

// Following (the client's end is wire.Run). A `queuectl run` hands its
// job over with Run instead of Enqueue: once the job is stored (the same group commit), the worker keeps
// the connection and writes the job's runs back on it, as frames of one
// JSON line each: output as it is written, each run's start and end, and
// the job once it is finished. The client may write lines back: "cancel"
// to cancel the job, "stop" and "cont" to stop its running processes and
// let them go on (its Ctrl-Z); closing the connection leaves the job to
// run, its processes going on. When the worker stops before the job is finished, its last frame
// says so (Handover), and the client follows the job in the store itself.

// The client's lines (wire.CancelLine).
const (
	cancelLine = wire.CancelLine
	stopLine   = wire.StopLine
	contLine   = wire.ContLine
)

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
		s.readLines(ctx, r, j.ID, cancel)
	}()
	out := &frames{conn: conn, cancel: cancel}
	// The client has the job's environment: the frames leave it out.
	feed := Feed{Stdout: streamWriter{out, false}, Stderr: streamWriter{out, true},
		Event:   func(e Event) { e.Job.Env = nil; out.write(frame{Event: &e}) },
		Waiting: func(q jobs.Queue) { out.write(frame{Waiting: &q}) },
		Paused:  func(q string) { out.write(frame{Paused: q}) },
		Stalled: func(st Stall) { out.write(frame{Stalled: &st}) }}
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

// readLines reads the client's lines until it hangs up or ctx ends:
// "cancel" cancels the job, and the follow goes on to its end; "stop" and
// "cont" stop the job's processes and let them go on. A hang-up ends the
// follow, and lets processes the client stopped go on: a client killed
// while stopped leaves no job stopped for good.
func (s *Server) readLines(ctx context.Context, r *bufio.Reader, id string, hangUp context.CancelFunc) {
	stopped := false
	defer func() {
		if stopped {
			s.Suspend(id, false)
		}
	}()
	for {
		line, err := r.ReadString('\n')
		switch {
		case err == nil && line == cancelLine:
			s.cancel(ctx, id)
			continue
		case err == nil && (line == stopLine || line == contLine) && s.Suspend != nil:
			stopped = line == stopLine
			s.Suspend(id, stopped)
			continue
		case err == nil && (line == stopLine || line == contLine):
			continue
		}
		if ctx.Err() == nil {
			hangUp()
		}
		return
	}
}

// cancel cancels job id for its client.
func (s *Server) cancel(ctx context.Context, id string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, _, _, err := s.Store.Cancel(cctx, id); err != nil && !errors.Is(err, jobs.ErrConflict) {
		s.logf("enqueue socket: cancel job %s: %v", id, err)
	}
}

package cli

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/front"
	"github.com/queuectl/queuectl/handoff"
	"github.com/queuectl/queuectl/run"
	"github.com/urfave/cli/v2"
)

// runHandOff hands run's job to the worker serving this home's socket, as
// handOff does for enqueue, and asks it to send the job's runs back. Any
// error means the caller stores the job itself (handedAfterAll for
// handoff.ErrUnknown).
func runHandOff(c *cli.Context, nj *claim.NewJob, environ map[string]string) (*handoff.Stream, error) {
	sock, db, ok := handoffSocket(c)
	if !ok {
		return nil, handoff.ErrDeclined
	}
	if nj.ID == "" {
		nj.ID = claim.NewID(time.Now())
	}
	return handoff.Run(sock, db, *nj, environ)
}

// runStreamed follows a job the worker stored for run, on the worker's
// connection, its processes stopped with run's Ctrl-Z (suspender); when
// that worker stops following it first, run opens the store and follows
// it there.
func runStreamed(c *cli.Context, s *handoff.Stream, suspender *front.Suspender) error {
	defer s.Close()
	suspender.Follow(s)
	f := newFollower(c, claim.Result{Job: s.Job, Outcome: s.Outcome})
	f.stream = s
	j, err := f.follow()
	if !errors.Is(err, handoff.ErrHandover) {
		return f.end(j, err)
	}
	suspender.Follow(nil)
	s.Close()
	return withHome(func(c *cli.Context, h *home) error {
		f.h, f.stream = h, nil
		f.seen.replay()
		j, err := f.follow()
		return f.end(j, err)
	})(c)
}

// followStream reads the job's runs from the worker until it is finished,
// f.ctx ends (Ctrl-C, --timeout), or the worker stops following it
// (handoff.ErrHandover).
func (f *follower) followStream(stdout, stderr io.Writer) (claim.Job, error) {
	defer f.stream.InterruptWhen(f.ctx)()
	feed := handoff.Feed{Stdout: stdout, Stderr: stderr, Waiting: f.waits.limited, Paused: f.waits.pausedQueue, Stalled: f.stalled,
		Event: func(e handoff.Event) { f.event(run.TailEvent{Job: e.Job, Run: e.Run, Ended: e.Ended}) }}
	for {
		j, done, err := f.stream.Next(feed)
		switch {
		case done:
			return j, nil
		case f.ctx.Err() != nil:
			return claim.Job{}, f.ctx.Err()
		case err != nil:
			return claim.Job{}, err
		}
	}
}

// stopStream cancels the job through its worker, and writes what comes
// until the job's end, for stopWait at most.
func (f *follower) stopStream() {
	s := f.stream
	s.Resume(stopWait)
	err := s.Cancel()
	// Output that cannot be written (what stopped it) is dropped.
	drop := func(error) {}
	feed := handoff.Feed{Stdout: f.seen.writer(0, front.OutputWriter(f.c.App.Writer, drop)),
		Stderr:  f.seen.writer(1, front.OutputWriter(f.c.App.ErrWriter, drop)),
		Waiting: func(claim.Queue) {}, Paused: func(string) {}, Stalled: func(handoff.Stall) {}, Event: func(handoff.Event) {}}
	for err == nil {
		var done bool
		if _, done, err = s.Next(feed); done {
			return
		}
	}
	if errors.Is(err, handoff.ErrHandover) && errors.Is(err, os.ErrDeadlineExceeded) {
		f.notice("job %s is canceled; its worker is still stopping its processes", f.name)
		return
	}
	f.notice("job %s: cancel: %v", f.name, err)
}

// seen is what a follower wrote of each run: when the worker stops
// following the job and run follows it in the store from its first run,
// replay skips what was written already.
type seen struct {
	attempt int              // the run whose output comes now
	started map[int]bool     // runs whose start was told
	ended   map[int]bool     // runs whose end was told
	wrote   map[[2]int]int64 // bytes written, by run and stream (0 stdout, 1 stderr)
	skip    map[[2]int]int64 // bytes still to skip, when replaying
}

func newSeen() seen {
	return seen{started: map[int]bool{}, ended: map[int]bool{}, wrote: map[[2]int]int64{}, skip: map[[2]int]int64{}}
}

// replay makes what was written so far be skipped from now on.
func (s *seen) replay() {
	for k, n := range s.wrote {
		s.skip[k] = n
	}
}

// resume makes what the front program wrote, as r says, be skipped.
func (s *seen) resume(r front.Resume) {
	for _, a := range r.Started {
		s.started[a] = true
	}
	for _, a := range r.Ended {
		s.ended[a] = true
	}
	for _, w := range r.Wrote {
		s.skip[[2]int{int(w[0]), int(w[1])}] += w[2]
	}
}

// event notes a run's start or end, and reports whether it was told.
func (s *seen) event(attempt int, ended bool) (told bool) {
	s.attempt = attempt
	m := s.started
	if ended {
		m = s.ended
	}
	told, m[attempt] = m[attempt], true
	return told
}

func (s *seen) writer(stream int, w io.Writer) io.Writer { return seenWriter{s, stream, w} }

type seenWriter struct {
	s      *seen
	stream int
	w      io.Writer
}

func (w seenWriter) Write(p []byte) (int, error) {
	n := len(p)
	k := [2]int{w.s.attempt, w.stream}
	if skip := min(w.s.skip[k], int64(len(p))); skip > 0 {
		w.s.skip[k] -= skip
		p = p[skip:]
	}
	if len(p) > 0 {
		if _, err := w.w.Write(p); err != nil {
			return 0, err
		}
		w.s.wrote[k] += int64(len(p))
	}
	return n, nil
}

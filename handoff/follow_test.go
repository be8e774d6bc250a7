package handoff

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// serveFollowing starts a Server for s that follows jobs with follow.
func serveFollowing(t *testing.T, s *claim.Store, follow func(context.Context, claim.Job, Feed) (claim.Job, error)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), SocketName)
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Store: s, Follow: follow, Follows: func(q string) bool { return q != "elsewhere" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return path
}

// drain reads a stream to its end.
func drain(st *Stream) (out, errOut string, events int, j claim.Job, err error) {
	var o, e bytes.Buffer
	feed := Feed{Stdout: &o, Stderr: &e, Event: func(Event) { events++ }, Waiting: func(claim.Queue) {}}
	for {
		var done bool
		if j, done, err = st.Next(feed); done || err != nil {
			return o.String(), e.String(), events, j, err
		}
	}
}

// Run stores the job before its runs come back on the connection, in
// order, then the finished job; a job of a queue the server does not
// follow is declined, and stored by nobody.
func TestRunStreamsTheFollowedJob(t *testing.T) {
	s := mustOpenStore(t)
	path := serveFollowing(t, s, func(ctx context.Context, j claim.Job, f Feed) (claim.Job, error) {
		if _, err := s.Get(ctx, j.ID); err != nil {
			return j, err // not stored before it is followed
		}
		f.Event(Event{Job: j, Run: claim.Run{Attempt: 1}})
		f.Stdout.Write([]byte("one\n"))
		f.Stderr.Write([]byte("oops\n"))
		f.Stdout.Write([]byte("two\n"))
		f.Event(Event{Job: j, Run: claim.Run{Attempt: 1}, Ended: true})
		j.State = claim.Completed
		return j, nil
	})
	st, err := Run(path, s.Path(), claim.NewJob{ID: "a", Command: "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out, errOut, events, j, err := drain(st)
	if err != nil || out != "one\ntwo\n" || errOut != "oops\n" || events != 2 || j.State != claim.Completed {
		t.Errorf("stream: stdout %q stderr %q, %d events, job %s, %v; want one two, oops, 2, completed",
			out, errOut, events, j.State, err)
	}
	_, err = Run(path, s.Path(), claim.NewJob{ID: "b", Queue: "elsewhere", Command: "true"}, nil)
	if !errors.Is(err, ErrDeclined) {
		t.Errorf("Run of a queue the server does not follow = %v, want ErrDeclined", err)
	}
	if _, err := s.Get(context.Background(), "b"); !errors.Is(err, claim.ErrNotFound) {
		t.Errorf("declined job b: %v, want not stored", err)
	}
}

// Cancel cancels the job in the store, and the follow goes on to its end;
// a server that stops first hands the job over (ErrHandover).
func TestRunCancelAndHandover(t *testing.T) {
	s := mustOpenStore(t)
	path := serveFollowing(t, s, func(ctx context.Context, j claim.Job, f Feed) (claim.Job, error) {
		if j.ID == "handed" {
			return j, errors.New("the worker stops")
		}
		got, err := s.Wait(ctx, []string{j.ID}, 10*time.Millisecond)
		if err != nil {
			return j, err
		}
		return got[0], nil
	})
	st, err := Run(path, s.Path(), claim.NewJob{ID: "a", Command: "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Cancel(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, j, err := drain(st); err != nil || j.State != claim.Canceled {
		t.Errorf("after Cancel: job %s, %v; want canceled", j.State, err)
	}
	st2, err := Run(path, s.Path(), claim.NewJob{ID: "handed", Command: "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if _, _, _, _, err := drain(st2); !errors.Is(err, ErrHandover) {
		t.Errorf("a follow that failed: %v, want ErrHandover", err)
	}
}

// A Run client with no environment at all still has its job's environment
// made by the server's Env (which may add what the client lacks to
// QUEUECTL_UNSET): left out, the job would carry the worker's whole
// environment.
func TestRunEmptyEnvironmentGoesThroughEnv(t *testing.T) {
	s := mustOpenStore(t)
	path := filepath.Join(t.TempDir(), SocketName)
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	var asked []map[string]string
	srv := &Server{Store: s, Follows: func(string) bool { return true },
		Follow: func(ctx context.Context, j claim.Job, f Feed) (claim.Job, error) {
			j.State = claim.Completed
			return j, nil
		},
		Env: func(_ context.Context, _ string, environ map[string]string) map[string]string {
			asked = append(asked, environ)
			return map[string]string{"QUEUECTL_UNSET": "ONLY_THE_WORKER"}
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	for _, environ := range []map[string]string{{}, nil} {
		st, err := Run(path, s.Path(), claim.NewJob{ID: claim.NewID(s.Now()), Command: "true"}, environ)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, j, err := drain(st)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.Get(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := stored.Env["QUEUECTL_UNSET"]; got != "ONLY_THE_WORKER" {
			t.Errorf("job of a client with environment %v: env %v; want what the server's Env made of it", environ, stored.Env)
		}
	}
	if len(asked) != 2 {
		t.Errorf("Env asked %d times for 2 runs", len(asked))
	}
}

package handoff

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
)

// ErrServed is returned by Listen when a live worker already serves the
// socket: one per home is enough.
var ErrServed = errors.New("handoff: another worker serves the socket")

// Listen makes the socket at path, private to the user. A socket left by a
// worker that died (nobody accepts on it) is replaced.
func Listen(path string) (*net.UnixListener, error) {
	addr := &net.UnixAddr{Name: path, Net: "unix"}
	ln, err := net.ListenUnix("unix", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		if c, err := net.DialUnix("unix", nil, addr); err == nil {
			c.Close()
			return nil, ErrServed
		}
		if fi, err := os.Lstat(path); err == nil && fi.Mode().Type() == os.ModeSocket {
			os.Remove(path)
		}
		ln, err = net.ListenUnix("unix", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// The home is private already; the mode keeps the socket so should the
	// home's mode ever be loosened.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return ln, nil
}

// Store is what a Server needs of the store: a *claim.Store. It is an
// interface so that the client side of this package, which the small
// queuectl links, links no store.
type Store interface {
	// Names reports whether location, as a client spells its database,
	// names this store.
	Names(location string) bool
	// EnqueueEach stores jobs in one durable commit, each with its result.
	EnqueueEach(ctx context.Context, nj []jobs.NewJob) ([]jobs.Result, error)
	// Cancel cancels the job id (for a client of Run).
	Cancel(ctx context.Context, id string) (j jobs.Job, died []jobs.Job, changed bool, err error)
}

// Server stores the jobs clients hand it, in groups.
type Server struct {
	Store Store
	// Log receives diagnostics; may be nil.
	Log func(format string, args ...any)
	// Follows reports whether the server follows jobs of queue for the
	// clients of Run (Follow writes the job's runs); nil: it follows none,
	// and declines them.
	Follows func(queue string) bool
	// Follow writes job j's runs to feed until it is finished, and returns
	// it then; it returns ctx's error when ctx ends first.
	Follow func(ctx context.Context, j jobs.Job, feed Feed) (jobs.Job, error)
	// Env returns what of a Run client's environment a job of queue must
	// carry (what the workers that may run it lack); nil: all of it.
	Env func(ctx context.Context, queue string, environ map[string]string) map[string]string
	// Suspend stops (stop true) the running processes of job id, as Ctrl-Z
	// of a Run client asks, or lets them go on; nil: the client's
	// Ctrl-Z stops the client only.
	Suspend func(id string, stop bool)
}

// pending is one client's job waiting for the next group commit.
type pending struct {
	job   jobs.NewJob
	reply chan answer[jobs.Job]
}

// maxGroup bounds the jobs of one commit.
const maxGroup = 512

// Serve takes clients on ln until ctx ends; then it closes ln, removes the
// socket, answers the clients it took, and returns. Serve owns the
// goroutines it starts; all have ended when it returns.
func (s *Server) Serve(ctx context.Context, ln *net.UnixListener) error {
	path := ln.Addr().String()
	ln.SetUnlinkOnClose(false) // another worker may have replaced it; remove it only if it is ours
	fi, _ := os.Lstat(path)
	queue := make(chan pending, maxGroup)
	committed := make(chan struct{})
	go func() { defer close(committed); s.commit(queue) }()

	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var clients sync.WaitGroup
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			break
		}
		clients.Add(1)
		go func() { defer clients.Done(); s.serve(ctx, conn, queue) }()
	}
	ln.Close()
	if now, err := os.Lstat(path); err == nil && fi != nil && os.SameFile(fi, now) {
		os.Remove(path)
	}
	clients.Wait()
	close(queue)
	<-committed
	return nil
}

// serve reads one client's job, queues it for the next commit and answers;
// for a client of Run, it then follows the job.
func (s *Server) serve(ctx context.Context, conn *net.UnixConn, queue chan<- pending) {
	defer conn.Close()
	if err := sameUser(conn); err != nil {
		s.logf("enqueue socket: %v", err)
		return
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(io.LimitReader(conn, maxLine))
	line, err := r.ReadBytes('\n')
	if err != nil {
		return
	}
	var req request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	a := answer[jobs.Job]{}
	switch {
	case dec.Decode(&req) != nil || req.Fingerprint != reflectedPrint(req.Follow):
		a.Declined = "another build of queuectl"
	case !s.Store.Names(req.DB):
		a.Declined = "another database"
	case req.Follow && (s.Follows == nil || !s.Follows(req.Job.Queue)):
		a.Declined = "no worker of this process serves the queue"
	default:
		// Names and values that are not UTF-8 come escaped
		// (wire.AppendRequest): their bytes are compared with the
		// workers' environment, and the store escapes them again.
		req.Job.Env, req.Environ = jobs.UnescapeEnv(req.Job.Env), jobs.UnescapeEnv(req.Environ)
		if req.Follow {
			req.Job.Env = s.jobEnv(ctx, req)
		}
		p := pending{job: req.Job, reply: make(chan answer[jobs.Job], 1)}
		queue <- p
		a = <-p.reply
	}
	if req.Follow {
		a.Job.Env = nil // the client has it, and prints no job
	}
	data, err := encode(a)
	if err != nil {
		return
	}
	conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(data); err == nil && req.Follow && a.Declined == "" {
		conn.SetWriteDeadline(time.Time{})
		s.follow(ctx, conn, r, a.Job)
	}
}

// commit stores the queued jobs: each group is what arrived while the
// previous commit was being written, in one fsync'd transaction, so that
// concurrent clients share an fsync. It returns when queue is closed.
// A store that cannot be reached is said once, not once per client that
// enqueues meanwhile (each client says its own error): the next is said
// after a commit went through.
func (s *Server) commit(queue <-chan pending) {
	away := false // a commit failed for want of the store, and none went through since
	group := make([]pending, 0, maxGroup)
	batch := make([]jobs.NewJob, 0, maxGroup)
	for p := range queue {
		group, batch = append(group[:0], p), append(batch[:0], p.job)
	more:
		for len(group) < maxGroup {
			select {
			case p, ok := <-queue:
				if !ok {
					break more
				}
				group, batch = append(group, p), append(batch, p.job)
			default:
				break more
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		rs, err := s.Store.EnqueueEach(ctx, batch)
		cancel()
		switch unavailable := errors.Is(err, jobs.ErrUnavailable); {
		case err == nil:
			away = false
		case !unavailable || !away:
			s.logf("enqueue socket: store %d job(s): %v", len(batch), err)
			away = unavailable
		}
		for i, p := range group {
			switch {
			case err != nil:
				// Whether the commit reached the disk is not known here:
				// the client looks its job up by id before it stores it.
				p.reply <- answer[jobs.Job]{Declined: err.Error(), Unknown: true}
			case rs[i].Err != nil:
				p.reply <- answer[jobs.Job]{Declined: rs[i].Err.Error()}
			default:
				p.reply <- answer[jobs.Job]{Job: rs[i].Job, Outcome: rs[i].Outcome}
			}
		}
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(format, args...)
	}
}

// jobEnv is the environment a Run client's job carries: what Env keeps of
// the client's, and the values it gave explicitly over them. A client with
// no environment at all (env -i; the wire leaves an empty one out) goes
// through Env too: it lacks every variable of the worker's.
func (s *Server) jobEnv(ctx context.Context, req request) map[string]string {
	env := req.Environ
	if s.Env != nil {
		env = s.Env(ctx, req.Job.Queue, env)
	}
	if len(req.Job.Env) == 0 {
		return env
	}
	if env == nil {
		env = map[string]string{}
	}
	for k, v := range req.Job.Env {
		env[k] = v
	}
	return env
}

package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/queuectl/queuectl/front"

	"github.com/urfave/cli/v2"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/handoff"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
)

// handOff gives one job to the worker serving this home's enqueue socket
// (package handoff), which commits it durably with whatever other enqueues
// arrived meanwhile. It picks the job's id when the user gave none, so
// that an unknown outcome can be looked up. Any error means the caller
// stores the job itself (see handedAfterAll for handoff.ErrUnknown).
func handOff(c *cli.Context, nj *claim.NewJob) (claim.Result, error) {
	sock, db, ok := handoffSocket(c)
	if !ok {
		return claim.Result{}, handoff.ErrDeclined
	}
	if nj.ID == "" {
		nj.ID = claim.NewID(time.Now())
	}
	return handoff.Enqueue(sock, db, *nj)
}

// handoffSocket returns this home's enqueue socket and the database a
// client names to its worker, when a worker may serve it (front.Socket).
func handoffSocket(c *cli.Context) (sock, db string, ok bool) {
	return front.Socket(c.String("home"), c.String("db"))
}

// handedAfterAll settles an enqueue whose handoff had no answer, after the
// store refused it (err): when the job the worker may have stored is there,
// with this command, made since this enqueue began, it is this enqueue's.
func handedAfterAll(c *cli.Context, h *home, nj claim.NewJob, start time.Time, err error) ([]claim.Result, error) {
	if !errors.Is(err, claim.ErrConflict) {
		return nil, err
	}
	j, getErr := h.store.Get(context.WithoutCancel(c.Context), nj.ID)
	if getErr != nil || j.Command != nj.Command || j.CreatedAt.Before(start) {
		return nil, err
	}
	return []claim.Result{{Job: j, Outcome: claim.Created}}, nil
}

// serveEnqueues takes enqueues handed over this home's socket until the
// returned function is called, which waits for the last answers. It
// follows the jobs of `run` for the queues this worker serves (queues;
// none: all), woken by nudges (fired from the worker's events), and stops
// their processes while their `run` is stopped (suspend). When
// another worker serves the socket, or it cannot be made, enqueues go to
// the store directly: nothing is lost but speed.
func serveEnqueues(c *cli.Context, h *home, queues []string, nudges *run.Nudges, suspend func(id string, stop bool)) (end func()) {
	ln, err := handoff.Listen(filepath.Join(h.dir, handoff.SocketName))
	if err != nil {
		if !errors.Is(err, handoff.ErrServed) {
			logf(c)("enqueues go to the store directly: %v", err)
		}
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.Context))
	done := make(chan struct{})
	srv := &handoff.Server{Store: h.store, Log: logf(c), Follow: followFor(h, nudges), Env: envFor(h), Suspend: suspend,
		Follows: func(q string) bool { return len(queues) == 0 || slices.Contains(queues, cmp.Or(q, claim.DefaultQueue)) }}
	go func() { defer close(done); srv.Serve(ctx, ln) }()
	return func() { cancel(); <-done }
}

// envFor is what of a run's environment a job handed to this worker
// carries: as on the store path (runEnv), what the home's live workers
// that may run it lack. When they cannot be read, all of it.
func envFor(h *home) func(context.Context, string, map[string]string) map[string]string {
	var kept workerEnvs
	return func(ctx context.Context, queue string, environ map[string]string) map[string]string {
		live, err := liveWorkers(ctx, h)
		if err != nil {
			return environ
		}
		return runEnv(environ, cmp.Or(queue, claim.DefaultQueue), live, &kept)
	}
}

// followFor follows a job for a client of handoff.Run, in the worker's
// process: as run's store path does (follower), but woken at once by the
// worker's own events, begun from the job as enqueued, and told each start
// with the job and run the slot claimed (run.Nudges): of the job's reads,
// only its end's are left, and one of its queues while it waits. It tells the client why the job waits (runWaits),
// from its looks at the job.
func followFor(h *home, nudges *run.Nudges) func(context.Context, claim.Job, handoff.Feed) (claim.Job, error) {
	return func(ctx context.Context, j claim.Job, feed handoff.Feed) (claim.Job, error) {
		watch := nudges.Watch(j.ID)
		defer watch.Stop()
		waits := &runWaits{waiting: feed.Waiting, paused: feed.Paused, stalled: feed.Stalled}
		t := &run.Tail{Store: h.store, Stdout: feed.Stdout, Stderr: feed.Stderr, Watch: watch, From: &j,
			Every: 50 * time.Millisecond, Poll: min(h.config.PollInterval, 200*time.Millisecond),
			Event:      func(e run.TailEvent) { feed.Event(handoff.Event{Job: e.Job, Run: e.Run, Ended: e.Ended}) },
			Look:       func(j claim.Job) { waits.look(ctx, h, j) },
			Unrecorded: func(u run.Unrecorded, lost int64) { unrecordedStall(u, lost, feed.Stalled) }}
		return t.Follow(ctx, j.ID)
	}
}

// unrecordedStall tells run's caller why its job, which ended, is not
// finished for it yet: its end waits to be recorded on a full disk. run
// waits for it, and exits with the job's exit code once it is (SPEC: that
// code is the job's, as recorded). The output the log could not keep is
// said too: what follows is the end of it, as the worker held it. Said on
// the worker's connection (followFor) and by run following its job in the
// store (follower), which sees the end but not how it went: then the
// exit code is left out.
func unrecordedStall(u run.Unrecorded, lost int64, stalled func(handoff.Stall)) {
	how := u.Run.Error
	if u.Run.ExitCode != nil {
		how = fmt.Sprintf("exit %d", *u.Run.ExitCode)
	}
	ended := "ended"
	if how != "" {
		ended = fmt.Sprintf("ended (%s)", how)
	}
	where := run.FullDir(u.Err.Error())
	st := handoff.Stall{Why: fmt.Sprintf("%s, but its end cannot be recorded until there is room: %v; run waits for it", ended, u.Err)}
	if where != "" {
		st.Why = fmt.Sprintf("%s, but its end cannot be recorded until there is room: disk full at %s; run waits for it, and exits as the job did once it is recorded", ended, where)
		st.Hint = "free space on the file system of " + where
	}
	stalled(st)
	lostStall(lost, stalled)
}

// lostStall says how much of the output of a run whose end waited for room
// the full disk lost, before the end its worker kept is written: on the
// worker's connection when it tells (unrecordedStall), in the store once
// the end is recorded (run.Tail.Lost).
func lostStall(lost int64, stalled func(handoff.Stall)) {
	if lost > 0 {
		stalled(handoff.Stall{Why: fmt.Sprintf("lost %s of its output to the full disk: it is missing here, and what follows is its end (the last %s of each stream, which its worker kept)",
			report.Bytes(lost), report.Bytes(claim.TailBytes))})
	}
}

// resumeKey holds, in the commands' context, the front.Resume of a call
// the front program began: its job was handed to the worker already.
type resumeKey struct{}

// resumed returns the call's front.Resume: then enqueue and run store the
// job only if the worker did not (handedAfterAll), with its id.
func resumed(c *cli.Context) (front.Resume, bool) {
	r, ok := c.Context.Value(resumeKey{}).(front.Resume)
	return r, ok
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
	"github.com/urfave/cli/v2"
)

func workerCommand(hard context.Context) *cli.Command {
	return &cli.Command{
		Name:        "worker",
		Usage:       "run jobs (start), change a running worker's slots (scale), or stop running workers (stop)",
		Description: "Example: queuectl worker start --count 4",
		Subcommands: []*cli.Command{{
			Name:  "start",
			Usage: "run jobs in the foreground until stopped",
			Description: `Runs up to --count jobs at a time and ingests the spool. Several workers may
share one home. First SIGINT/SIGTERM (or 'queuectl worker stop', or SIGHUP: its terminal or
ssh session closed): finish running jobs, exit 0. Second: stop running jobs, put them back to
pending, exit 130. A worker started with SIGINT ignored (as 'queuectl worker start &' in a
script is) leaves SIGINT alone; one started under nohup, SIGHUP.

--drain (for cron) exits 0 once nothing is runnable and no failed job waits for its retry
(jobs scheduled for later, and those of paused queues, are not waited for): it first
recovers the runs of workers that died (killed, crashed: on this host at once, of another
host once their lease has lapsed) and runs their jobs again. A job another host's worker
runs under a live lease is not waited for.

Example: queuectl worker start --count 4 --queue default --queue mail`,
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "count", Aliases: []string{"n"}, Value: 1, Usage: "`N` jobs to run at once"},
				&cli.StringSliceFlag{Name: "queue", Usage: "run only jobs of queue `Q` (repeatable)"},
				&cli.BoolFlag{Name: "drain", Usage: "exit 0 once no job is runnable or waiting for its retry, dead workers' runs recovered first"},
				&cli.BoolFlag{Name: "no-spool", Usage: "do not ingest the spool directory"},
				logFlags()[0], logFlags()[1],
			},
			Action: around(openWorkerHome, func(c *cli.Context, h *home) error { return workerStart(c, h, hard) }),
		}, {
			Name:  "stop",
			Usage: "ask every worker of the store to finish its jobs and exit",
			Description: `Every worker of the store: on SQLite, the workers of this home; on PostgreSQL, of every host
that shares the store. To stop one host's worker only, stop it there (SIGTERM, or its service).
With --wait it returns once every worker has left the store and those of this host have exited
(closed the store): a db restore after it finds none. Workers that crashed are not counted.

Example: queuectl worker stop --wait --timeout 1m`,
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "wait", Usage: "wait until the workers have exited"},
				durationFlag("timeout", time.Minute, "with --wait: give up after `D` (exit 124), e.g. 5m or 300 (seconds)"),
			},
			Action: withHomeSpool(true, workerStop),
		}, {
			Name:      "scale",
			Usage:     "give every running worker of the store N slots, without a restart",
			ArgsUsage: "N",
			Description: `Returns once every running worker has taken the new count (exit 124 if one has not
within --timeout), so a job enqueued after it is claimed by the new count: a worker scaled up
claims in its new slots at once; one scaled down lets its running jobs finish and claims nothing
until fewer than N run. A worker started later has its own --count. Every running worker of the
store: on SQLite, the workers of this home; on PostgreSQL, of every host that shares the store.
(Per queue, limit with queue set --max-running.)

Example: queuectl worker scale 8`,
			Flags: []cli.Flag{
				durationFlag("timeout", 10*time.Second, "give up waiting for the workers to take the count after `D` (exit 124)"),
			},
			Action: withHome(workerScale),
		}},
	}
}

func workerScale(c *cli.Context, h *home) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(a[0])
	if err != nil {
		return withHint(usagef("%q is not a number of slots", a[0]), "queuectl worker scale 8")
	}
	// The rows of workers that crashed stay until a worker recovers them:
	// they are not counted as scaled.
	live, err := liveWorkers(c.Context, h)
	if err != nil {
		return err
	}
	if _, err := h.store.ScaleWorkers(c.Context, n); err != nil {
		return err
	}
	if len(live) == 0 {
		logf(c)("no worker is running; start one with: queuectl worker start --count %d", n)
		return nil
	}
	// Each worker reads its new count when the store changes, and says
	// when it claims with it: until then a job enqueued could still be
	// claimed by the old count.
	ctx, cancel := context.WithTimeout(c.Context, durationOf(c, "timeout"))
	defer cancel()
	var slow []claim.WorkerInfo
	err = h.store.WaitUntil(ctx, 100*time.Millisecond, func() (bool, error) {
		slow, err = unscaled(ctx, h, n)
		return len(slow) == 0, err
	})
	if errors.Is(err, context.DeadlineExceeded) {
		// Counted again outside the expired context.
		if slow, err = unscaled(c.Context, h, n); err == nil && len(slow) > 0 {
			return &exitStatus{exitTimeout, withHint(fmt.Errorf("%d worker(s) have not taken %d slot(s) after %v: %s",
				len(slow), n, durationOf(c, "timeout"), stillRunning(h, slow)),
				"each takes it when it next reads the store; a stopped (Ctrl-Z) or stuck worker does not")}
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "Scaled %d worker(s) to %d slot(s) each\n", len(live), n)
	return nil
}

// unscaled lists the running workers, not stopping, that are to have n
// slots and do not claim with them yet (worker scale). One that is to have
// another count (started meanwhile with its own --count, or scaled again
// by another worker scale) is not this call's to wait for; nor is one of
// an older queuectl, which never says (SlotsApplied 0).
func unscaled(ctx context.Context, h *home, n int) ([]claim.WorkerInfo, error) {
	live, err := liveWorkers(ctx, h)
	if err != nil {
		return nil, err
	}
	var slow []claim.WorkerInfo
	for _, w := range live {
		if !w.Stopping && w.Slots == n && w.SlotsApplied != 0 && w.SlotsApplied != n {
			slow = append(slow, w)
		}
	}
	return slow, nil
}

// openWorkerHome is openHome with the store's connections sized for the
// worker's slots (claim.ForWorker): a fleet of workers on one PostgreSQL
// server holds a known number of connections.
//
// The worker is marked as starting (run.Starting) from before the store
// is opened, the home made and checked: wait and run do not warn of no
// live worker while one opens the store, ingests the spool and registers.
func openWorkerHome(c *cli.Context) (*home, error) {
	started := func() {}
	h, err := openHomeWith(c, false, func(location string) (*claim.Store, error) {
		if dir, _, err := homePaths(c); err == nil {
			started = run.Starting(dir)
		}
		return claim.OpenWith(location, claim.ForWorker(c.Int("count")))
	})
	if err != nil {
		started()
		return nil, err
	}
	h.started = started
	h.watched = true // run.Worker.watchFile
	if h, err = h.readConfig(c); err != nil {
		started()
	}
	return h, err
}

func workerStart(c *cli.Context, h *home, hard context.Context) error {
	defer h.started() // if it never registers
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	if c.Int("count") < 1 || c.Int("count") > 1024 {
		return usagef("--count %d: give 1 to 1024 slots", c.Int("count"))
	}
	for _, q := range c.StringSlice("queue") {
		if !claim.ValidID(q) {
			// No job can be in such a queue: the worker would run nothing.
			return usagef("--queue %q is not a queue name: %s", q, claim.NameRule)
		}
	}
	log, err := newEventLog(c)
	if err != nil {
		return err
	}
	log.home, log.db, log.watched = h.dir, claim.RedactLocation(h.db), !c.Bool("no-spool")
	log.holdUntilStart()
	defer log.close() // with the lines held if the worker never started
	soft := c.Context
	if err := spool.SyncDead(c.Context, h.store, h.dirs.Dead); err != nil {
		log.warnf("dead/: %v", err)
	}
	// The watcher ends with the worker, however the worker stops: a signal,
	// `worker stop`, or the end of a drain.
	watching, endWatch := context.WithCancel(soft)
	defer endWatch()
	ingesting := make(chan error, 1)
	if c.Bool("no-spool") {
		ingesting <- nil
	} else {
		// One pass before the first claim, so that a drain sees what was
		// already dropped; the same watcher then runs, and says nothing
		// of the spool twice.
		sw := newWatcher(h, log)
		if _, err := sw.Pass(c.Context); err != nil {
			return err
		}
		// The worker says when the store is away, once (run/outage.go).
		sw.AwaySaid = true
		go func() { ingesting <- sw.Run(watching) }()
	}
	// Schedule files are read by every worker, --no-spool or not: they
	// define schedules, they are not jobs to ingest.
	scheduling := make(chan error, 1)
	sd := &spool.ScheduleDir{Dirs: h.dirs, Store: h.store, Rescan: h.config.SpoolRescan, Log: logf(c), AwaySaid: true}
	go func() { scheduling <- sd.Run(watching) }()
	var nudges run.Nudges
	var w *run.Worker
	endServe := func() {}
	events := func(e run.Event) {
		if e.Kind == run.EventStart {
			h.started()
			// The socket is served once the worker is registered (Run
			// emits its start in the caller's goroutine): a client that
			// finds it finds a live worker in the store too.
			endServe = serveEnqueues(c, h, c.StringSlice("queue"), &nudges, w.Suspend)
		}
		if e.Kind == run.EventStopping {
			// Stopping by `worker stop` too, it says "signal again":
			// the next signal is the second, whatever stopped it.
			stoppedOfItself(hard)
		}
		log.worker(e)
		nudges.Fire(e)
	}
	w = &run.Worker{Store: h.store, Config: h.config, Reload: h.store.Config, Slots: c.Int("count"), Queues: c.StringSlice("queue"),
		LogDir: h.logs, Home: h.dir, DB: h.db, Drain: c.Bool("drain"), OnDead: onDead(h, log), Events: events, Starts: nudges.Start, Output: nudges.Output,
		Unrecorded: nudges.Unrecorded}
	if claim.EngineFor(h.db) == claim.EnginePostgres {
		// Other hosts' workers kill and re-drive jobs too: their dead/
		// files belong in this home as well, while this worker runs.
		w.SyncDead = func(ctx context.Context) error { return spool.SyncDead(ctx, h.store, h.dirs.Dead) }
		// and the logs of the jobs they remove, which rm there cannot reach
		w.PruneRemoved = true
	}
	err = w.Run(soft, hard)
	endServe()
	endWatch()
	return firstErr(err, <-ingesting, <-scheduling)
}

// onDead writes dead/<id>.json for a job that just died.
func onDead(h *home, log *eventLog) func(context.Context, claim.Job) {
	return func(ctx context.Context, j claim.Job) {
		runs, err := h.store.Runs(ctx, j.ID)
		if err == nil {
			err = spool.WriteDead(h.dirs.Dead, j, runs)
		}
		if err != nil {
			log.warnf("job %s is dead, but dead/%s.json: %v", j.ID, j.ID, err)
		}
	}
}

func workerStop(c *cli.Context, h *home) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	// Only the live are counted: the rows of workers that crashed stay
	// until a worker recovers them.
	asked, err := liveWorkers(c.Context, h)
	if err != nil {
		return err
	}
	if _, err := h.store.RequestStop(c.Context); err != nil {
		return err
	}
	if len(asked) == 0 {
		logf(c)("no worker is running: nothing to stop")
		return nil
	}
	logf(c)("asked %d worker(s) to stop", len(asked))
	if !c.Bool("wait") {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.Context, durationOf(c, "timeout"))
	defer cancel()
	// Workers that exit cleanly wake us; the poll catches crashed ones.
	// One of another host that stopped answering (crashed, or cut off)
	// counts until its lease lapses: said once, rather than a silent wait.
	saidSilent := false
	err = h.store.WaitUntil(ctx, 100*time.Millisecond, func() (bool, error) {
		live, err := liveWorkers(ctx, h)
		if silent := silentWorkers(h, live); len(silent) > 0 && !saidSilent {
			saidSilent = true
			logf(c)("waiting for %s", stillRunning(h, silent))
		}
		return len(live) == 0, err
	})
	if err == nil {
		// A worker leaves the store's registry before it has closed the
		// store: those of this host are waited for until they have
		// exited, so that what comes next (db restore) finds none.
		var pids []int
		for _, w := range asked {
			if w.Host == run.HostID() {
				pids = append(pids, w.PID)
			}
		}
		if err = run.WaitExited(ctx, pids); errors.Is(err, context.DeadlineExceeded) {
			return &exitStatus{exitTimeout, fmt.Errorf("worker(s) stopped, but still exiting after %v", durationOf(c, "timeout"))}
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// Counted outside the expired context, which may have cut the last look
	// short: an error there must not read as "0 still running".
	live, err := liveWorkers(c.Context, h)
	if err != nil || len(live) == 0 {
		return err
	}
	err = fmt.Errorf("%d worker(s) still running after %v: %s", len(live), durationOf(c, "timeout"), stillRunning(h, live))
	if hint := finishing(c.Context, h, live); hint != "" {
		err = withHint(err, hint)
	}
	return &exitStatus{exitTimeout, err}
}

// finishing says, for worker stop --wait that timed out, what the workers
// wait for (the jobs they run, which a stopping worker finishes) and how
// not to: a signal to a worker of this host stops its jobs and puts them
// back to pending, cancel ends them. "" when they run none.
func finishing(ctx context.Context, h *home, live []claim.WorkerInfo) string {
	ours := map[string]bool{}
	for _, w := range live {
		ours[w.ID] = true
	}
	var ids []string
	n := 0
	for j, err := range h.store.Jobs(ctx, claim.Filter{State: claim.Processing}) {
		if err != nil {
			return ""
		}
		if ours[j.WorkerID] {
			if n++; n <= 3 {
				ids = append(ids, j.ID)
			}
		}
	}
	if n == 0 {
		return ""
	}
	named := strings.Join(ids, ", ")
	if n > len(ids) {
		named += fmt.Sprintf(" and %d more", n-len(ids))
	}
	var here []string
	for _, w := range live {
		if w.Host == run.HostID() {
			here = append(here, strconv.Itoa(w.PID))
		}
	}
	how := "queuectl cancel ID ends them"
	if len(here) > 0 {
		how = fmt.Sprintf("kill -TERM %s stops them now and puts them back to pending; queuectl cancel ID ends them", strings.Join(here, " "))
	}
	return fmt.Sprintf("a stopping worker first finishes its running jobs (%d: %s); %s", n, named, how)
}

// silentWorkers returns those of live, of another host, that are late
// with their heartbeat: dead, or cut off; they count as running until
// their lease lapses.
func silentWorkers(h *home, live []claim.WorkerInfo) []claim.WorkerInfo {
	var out []claim.WorkerInfo
	for _, w := range live {
		if w.Host != run.HostID() && w.Silence(time.Now()) > 2*w.HeartbeatOr(h.config.HeartbeatInterval)+time.Second {
			out = append(out, w)
		}
	}
	return out
}

// stillRunning names live workers for worker stop --wait that timed out:
// pid and host, and of another host's worker that is late with its
// heartbeat (dead, or cut off), since when, and why it still counts.
func stillRunning(h *home, live []claim.WorkerInfo) string {
	var names []string
	var silent []time.Duration // the leases of the silent ones
	late := silentWorkers(h, live)
	for _, w := range live {
		name := fmt.Sprintf("pid %d on %s", w.PID, w.Host)
		if slices.ContainsFunc(late, func(o claim.WorkerInfo) bool { return o.ID == w.ID }) {
			name += fmt.Sprintf(", not heard from for %v", w.Silence(time.Now()).Round(time.Second))
			silent = append(silent, w.LeaseOr(h.config.Lease))
		}
		names = append(names, name)
	}
	text := strings.Join(names, "; ")
	if len(silent) > 0 {
		// Each by its own lease; the longest is how long the wait may be.
		text += fmt.Sprintf(" (a worker of another host counts as running until its lease lapses, %v after its last heartbeat)", slices.Max(silent)+run.OtherHostGrace)
	}
	return text
}

// liveWorkers lists the registered workers that are still running.
func liveWorkers(ctx context.Context, h *home) ([]claim.WorkerInfo, error) {
	all, err := h.store.Workers(ctx)
	if err != nil {
		return nil, err
	}
	var live []claim.WorkerInfo
	for _, w := range all {
		if !run.Gone(w, run.HostID(), time.Now(), h.config.Lease) {
			live = append(live, w)
		}
	}
	return live, nil
}

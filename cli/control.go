package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
	"github.com/urfave/cli/v2"
)

func cancelCommand() *cli.Command {
	return &cli.Command{
		Name:      "cancel",
		Usage:     "stop jobs for good: pending and failed ones at once, running ones by stopping their processes",
		ArgsUsage: "ID... | --queue Q",
		Description: `A running job's whole process group gets TERM, then KILL after stop-timeout, from
the worker that runs it; cancel returns once it is stopped (--no-wait: at once).
A running job whose worker is gone (killed, crashed) cancel stops itself: it kills
what is left of the run's processes and ends the job canceled, worker or none.
A canceled job never runs again unless restarted. Exit 3 for an unknown job,
4 for a completed or dead one.

Example: queuectl cancel nightly-db`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "queue", Usage: "cancel every unfinished job of queue `Q`"},
			&cli.BoolFlag{Name: "no-wait", Usage: "return without waiting for running jobs to stop"},
			jsonFlag,
		},
		Action: withHome(cancelJobs),
	}
}

func cancelJobs(c *cli.Context, h *home) error {
	ids, err := args(c, 0, -1)
	if err != nil {
		return err
	}
	if c.IsSet("queue") == (len(ids) > 0) {
		return withHint(usagef("give job ids or --queue%s", givenTwice(len(ids) > 0, c.IsSet("queue"))), "queuectl cancel ID...  or  queuectl cancel --queue Q")
	}
	out := &jobsOut{c: c, store: h.store}
	var stopping []claim.Job // running jobs, marked: their workers stop them
	said := func(j claim.Job) {
		if j.State == claim.Canceled {
			out.did(j, "Canceled job %s", j.ID)
		} else {
			stopping = append(stopping, j)
		}
	}
	if c.IsSet("queue") {
		jobs, died, err := h.store.CancelQueue(c.Context, c.String("queue"))
		diedWith(c, h, died)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			said(j)
		}
		if len(jobs) == 0 {
			logf(c)("no unfinished job in queue %s", c.String("queue"))
		}
		return out.end(awaitCanceled(c, h, out, stopping, nil))
	}
	failed := eachJob(c, h, ids, func(id string) error {
		// Canceling a canceled job changes nothing, and is no error; it
		// is said so rather than as a cancel.
		j, died, changed, err := h.store.Cancel(c.Context, id)
		switch {
		case err == nil && !changed:
			out.did(j, "Job %s was canceled already", j.ID)
		case err == nil:
			said(j)
		}
		diedWith(c, h, died)
		return err
	})
	return out.end(awaitCanceled(c, h, out, stopping, failed))
}

// rearmedWith says on stderr which jobs came back with id, re-driven by
// dlq retry or restart, as diedWith said they died with it; and which of
// them stay dead because a live job holds their unique_key, with what to do
// (report.RearmedLines, the words the dashboard shows too).
func rearmedWith(c *cli.Context, h *home, id string, r claim.Rearmed) {
	keys := map[string]string{}
	for _, left := range r.Left {
		if j, err := h.store.Get(c.Context, left); err == nil {
			keys[left] = j.UniqueKey
		}
	}
	for _, line := range report.RearmedLines(id, r, keys) {
		logf(c)("%s", line)
	}
}

// diedWith writes the dead/ files of jobs that died waiting for a job just
// canceled, and says so (report.DiedLine, the words the dashboard shows too).
func diedWith(c *cli.Context, h *home, died []claim.Job) {
	for _, j := range died {
		runs, err := h.store.Runs(c.Context, j.ID)
		if err == nil {
			err = spool.WriteDead(h.dirs.Dead, j, runs)
		}
		if err != nil {
			logf(c)("job %s is dead (%s), but dead/%s.json: %v", j.ID, j.LastError, j.ID, err)
			continue
		}
		logf(c)("%s", report.DiedLine(j))
	}
}

// awaitCanceled waits until the running jobs are stopped, unless
// --no-wait, and returns failed (the exit status of the ids that could not
// be canceled) when that works.
func awaitCanceled(c *cli.Context, h *home, out *jobsOut, running []claim.Job, failed error) error {
	running = cancelOrphaned(c, h, out, running)
	if len(running) == 0 {
		return failed
	}
	if c.Bool("no-wait") {
		for _, j := range running {
			out.did(j, "Canceling job %s: its worker is stopping it", j.ID)
		}
		return failed
	}
	ids := make([]string, len(running))
	for i, j := range running {
		ids[i] = j.ID
	}
	if live, err := liveWorkers(c.Context, h); err == nil && len(live) == 0 {
		logf(c)("no worker is running: %s is recovered once its run's lease on its host runs out", strings.Join(ids, " "))
	}
	err := awaitStopped(c, h, out, running)
	if errors.Is(err, context.Canceled) {
		return &exitStatus{exitInterrupted, nil}
	}
	if err != nil {
		return err
	}
	return failed
}

// awaitStopped waits until the workers running jobs have stopped them. A
// worker that dies meanwhile (killed while it waited for a job that
// ignores TERM) stops nothing more: at every poll interval, the runs of
// gone workers are recovered here (cancelOrphaned), as before the wait.
func awaitStopped(c *cli.Context, h *home, out *jobsOut, running []claim.Job) error {
	looked, began := time.Now(), time.Now()
	told := map[string]bool{}
	slowTold := false
	return h.store.WaitUntil(c.Context, h.config.PollInterval, func() (bool, error) {
		// Half an interval: the ticks come one apart, each a little late,
		// and a look put off by how late the last one came would wait for
		// the tick after, two intervals in all (tellUnheard's bound counts
		// one).
		if time.Since(looked) >= h.config.PollInterval/2 {
			looked = time.Now()
			running = cancelOrphaned(c, h, out, running)
			tellUnheard(c, h, running, told)
		}
		var left []claim.Job
		for _, j := range running {
			j, err := h.store.Get(c.Context, j.ID)
			switch {
			case err != nil:
				return false, err
			case !j.State.Finished():
				left = append(left, j)
			case j.State != claim.Canceled:
				// Unreachable by the store's rules (a marked job always
				// ends canceled); said rather than hidden if it ever happens.
				return false, fmt.Errorf("job %s ended %s, not canceled", j.ID, j.State)
			default:
				out.did(j, "Canceled job %s: its processes are stopped", j.ID)
			}
		}
		running = left
		if grace := h.config.StopTimeout; !slowTold && len(running) > 0 && grace > time.Second && time.Since(began) >= time.Second {
			// A job that traps TERM runs on until its worker's KILL:
			// say why cancel waits, rather than nothing for half a minute.
			// Not of a job whose worker is silent (told why already): no
			// worker sent it a TERM, and none will send the KILL.
			slowTold = true
			tellUnheard(c, h, running, told)
			var ids []string
			for _, j := range running {
				if !told[j.ID] {
					ids = append(ids, j.ID)
				}
			}
			verb := "is"
			if len(ids) > 1 {
				verb = "are"
			}
			if len(ids) > 0 {
				logf(c)("%s %s still running a second after SIGTERM: killed %v after it (stop-timeout); cancel --no-wait returns at once",
					report.JobNames(ids), verb, grace)
			}
		}
		return len(running) == 0, nil
	})
}

// tellUnheard says, once a job, why the cancel of a job still running
// waits when its worker is of another host and late with its heartbeat
// (as doctor deems it): a host that crashed or is cut off, whose run is
// recovered only once its lease lapses, half a minute by default. Told
// holds the jobs said already.
func tellUnheard(c *cli.Context, h *home, running []claim.Job, told map[string]bool) {
	if len(running) == 0 {
		return
	}
	workers, err := h.store.Workers(c.Context)
	if err != nil {
		return // the wait reads the store too, and says what fails
	}
	now := h.store.Now()
	for _, j := range running {
		i := slices.IndexFunc(workers, func(w claim.WorkerInfo) bool { return w.ID == j.WorkerID })
		if told[j.ID] || i < 0 || workers[i].Host == run.HostID() {
			continue
		}
		w := workers[i]
		host, _, _ := strings.Cut(w.Host, "/") // its hostname, without its boot id
		if age := w.Silence(now); age > 2*w.HeartbeatOr(h.config.HeartbeatInterval)+time.Second {
			told[j.ID] = true
			// The run's own lease: its worker renews it with the lease
			// it started with, which config set does not change.
			until := j.LeaseUntil
			if until.IsZero() {
				until = w.HeartbeatAt.Add(w.LeaseOr(h.config.Lease))
			}
			// Lost once the lease and the grace after it have passed, it is
			// taken back at the next look for lost runs: this command's own
			// (awaitStopped) comes once a poll interval.
			lapse := max(until.Sub(now), 0) + run.OtherHostGrace + h.config.PollInterval
			logf(c)("job %s: its worker %s on %s has not been heard from for %v: it is canceled once its run's lease lapses, within %v, unless that worker stops it first",
				j.ID, w.ID, host, age.Round(time.Second), ceilSecond(lapse))
		}
	}
}

// ceilSecond is d in whole seconds, rounded up: a bound said must not
// come before what it bounds.
func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// cancelOrphaned ends at once the cancels of running jobs whose workers
// are gone (killed, crashed), which no worker would stop before one
// started and recovered their runs: it recovers them itself, as a reaper
// does, killing what is left of their processes first (run.RecoverGone).
// It returns the jobs still running in live workers, for those to stop.
func cancelOrphaned(c *cli.Context, h *home, out *jobsOut, running []claim.Job) []claim.Job {
	if len(running) == 0 {
		return nil
	}
	ids := make([]string, len(running))
	for i, j := range running {
		ids[i] = j.ID
	}
	// Once it kills, the recovery is stored, whatever the terminal does.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Context), time.Minute)
	defer cancel()
	states, err := run.RecoverGone(ctx, h.store, ids)
	if err != nil {
		logf(c)("warning: recover the runs of dead workers: %v", err)
	}
	var left []claim.Job
	for _, j := range running {
		state, ok := states[j.ID]
		if !ok {
			left = append(left, j)
			continue
		}
		if state != claim.Canceled {
			// Unreachable by the store's rules (a marked job ends canceled).
			logf(c)("job %s: its dead worker's run is recovered, and the job is %s, not canceled", j.ID, state)
			continue
		}
		died, err := h.store.EndDependents(ctx, j.ID, claim.Canceled)
		if err != nil {
			logf(c)("job %s is canceled, but the jobs waiting for it: %v", j.ID, err)
		}
		diedWith(c, h, died)
		if now, err := h.store.Get(ctx, j.ID); err == nil {
			j = now
		}
		out.did(j, "Canceled job %s: its worker was gone; its processes are stopped", j.ID)
	}
	return left
}

func restartCommand() *cli.Command {
	return &cli.Command{
		Name:      "restart",
		Usage:     "run completed, dead or canceled jobs again, as new runs (old runs and logs are kept)",
		ArgsUsage: "ID... | --all --state STATE",
		Description: `The job goes back to pending with attempts 0; its runs number on from the
old ones, so no log is overwritten. A dead job's dead/ file is removed. Exit 4
for a job that is not finished.

The jobs that died waiting for a dead or canceled job come back with it,
pending and waiting again (named on stderr). Of the jobs that waited for a
completed job, those not started yet wait for its new run; those that ran
already are not run again: restart them too (restart --all --state completed
reruns a finished chain in order), or enqueue the chain anew.

Example: queuectl restart nightly-db`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "restart every job in --state"},
			&cli.StringFlag{Name: "state", Usage: "with --all: the jobs in `STATE`, completed, dead or canceled"},
			jsonFlag,
		},
		Action: withHome(restartJobs),
	}
}

func restartJobs(c *cli.Context, h *home) error {
	ids, err := args(c, 0, -1)
	if err != nil {
		return err
	}
	if c.Bool("all") == (len(ids) > 0) || c.Bool("all") != c.IsSet("state") {
		return withHint(usagef("give job ids, or --all with --state%s", givenTwice(len(ids) > 0, c.Bool("all"))), "queuectl restart ID...  or  queuectl restart --all --state canceled")
	}
	if c.Bool("all") {
		st, err := claim.ParseState(c.String("state"))
		if err != nil {
			return err
		}
		jobs, err := h.store.RestartAll(c.Context, st)
		if err != nil {
			return err
		}
		out := &jobsOut{c: c, store: h.store}
		for _, j := range jobs {
			out.did(j, "Restarting job %s", j.ID)
		}
		syncDead(c, h)
		return out.end(nil)
	}
	out := &jobsOut{c: c, store: h.store}
	err = eachJob(c, h, ids, func(id string) error {
		j, r, err := h.store.RestartChain(c.Context, id)
		if err != nil {
			return err
		}
		removeDead(c, h, j.ID)
		out.did(j, "Restarting job %s", j.ID)
		rearmedWith(c, h, j.ID, r)
		return nil
	})
	syncDead(c, h)
	return out.end(err)
}

// syncDead makes dead/ agree with the store after jobs came back from the
// dead: those restarted or retried, and the jobs their end had made dead
// (their dependents), pending again with them.
func syncDead(c *cli.Context, h *home) {
	if err := spool.SyncDead(c.Context, h.store, h.dirs.Dead); err != nil {
		logf(c)("dead/: %v", err)
	}
}

func rmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "forget finished or canceled jobs with their runs, logs and dead/ files",
		ArgsUsage: "ID...",
		Description: `Exit 3 for an unknown job, 4 for one not finished (cancel it first).

Removes the log files of this home. On a store that several hosts share, a run on another
host left its logs there: the worker of that host removes the job's logs/ID at its next look
over logs/, within 60 heartbeat intervals (5 minutes by default), or when it next starts.

Example: queuectl rm nightly-db`,
		Action: withHome(func(c *cli.Context, h *home) error {
			ids, err := args(c, 1, -1)
			if err != nil {
				return err
			}
			return eachJob(c, h, ids, func(id string) error {
				if err := h.store.Remove(c.Context, id); err != nil {
					return err
				}
				removeFiles(c, h, id)
				fmt.Fprintf(c.App.Writer, "Removed job %s\n", id)
				return nil
			})
		}),
	}
}

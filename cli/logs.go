package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/urfave/cli/v2"
)

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "print a run's stdout (or stderr); -f follows the job to its end",
		ArgsUsage: "ID",
		Description: `Prints the latest run's stdout, or run N's (--attempt N), or every run's (--all), each
after a header line. -f follows the job through its retries until it ends, and exits as wait
does: 0 completed, 1 dead; a store that goes away meanwhile is waited out, as wait does. A
job that has not run yet, or ended without running, has no logs: exit 3, as for a job that
does not exist, saying which (with -f: wait for its first run, warning on stderr as wait does
when it cannot start: no live worker serves its queue, its queue is paused, it is held,
scheduled more than a minute ahead, or waits on such a job; with --json: [], its runs as they
stand, exit 0).

Example: queuectl logs nightly-db -f --stderr`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "attempt", Usage: "run number `N` (default: the latest)"},
			&cli.BoolFlag{Name: "all", Usage: "every run, each after a header line"},
			&cli.BoolFlag{Name: "stderr", Usage: "print stderr instead of stdout"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "follow the job through its retries until it ends"},
			&cli.BoolFlag{Name: "json", Usage: "print the runs (latest, --attempt N or --all) with both streams' text as one JSON array"},
		},
		Action: withHome(logs),
	}
}

func logs(c *cli.Context, h *home) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	if c.Bool("all") && c.IsSet("attempt") {
		return usagef("give --all or --attempt, not both")
	}
	if c.IsSet("attempt") && c.Int("attempt") < 1 {
		return usagef("--attempt %d: runs are numbered from 1", c.Int("attempt"))
	}
	if c.Bool("json") && c.Bool("follow") {
		return withHint(usagef("--json prints runs as they stand; -f streams text: give one"), "queuectl wait ID && queuectl logs ID --json")
	}
	id, err := h.store.Resolve(c.Context, a[0])
	if err != nil {
		return err
	}
	j, err := h.store.Get(c.Context, id)
	if err != nil {
		return err
	}
	// With the tails' bytes, for runs whose files are not here.
	runs, err := h.store.RunsWithTails(c.Context, id)
	if err != nil {
		return err
	}
	l := &logPrinter{c: c, h: h, id: id,
		reach: reach(logf(c), "the job goes on, and logs follows it again once the store is back")}
	if len(runs) == 0 && c.Bool("follow") && !finished(j.State) {
		if j, runs, err = l.started(); err != nil {
			return l.interrupted(err)
		}
	}
	if len(runs) == 0 {
		return neverRan(c, h, j)
	}
	first := runs[len(runs)-1]
	switch {
	case c.Bool("all"):
		first = runs[0]
	case c.IsSet("attempt"):
		r, ok := runByAttempt(runs, c.Int("attempt"))
		if !ok {
			// No such run, as no such job: exit 3 (the API's 404).
			return withHint(&exitStatus{exitNotFound, fmt.Errorf("job %s has runs %d to %d, not %d", id, runs[0].Attempt, runs[len(runs)-1].Attempt, c.Int("attempt"))},
				"queuectl show "+id+"  (its runs)")
		}
		first = r
	}
	if c.Bool("json") {
		return l.json(runs, first.Attempt)
	}
	if !c.Bool("follow") {
		for _, r := range runs {
			if r.Attempt >= first.Attempt && (c.Bool("all") || r.Attempt == first.Attempt) {
				if err := l.print(r); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return l.follow(first)
}

// neverRan is logs' answer for job j without a run: with --json, its runs
// as they stand, none. One that ended so (dead through a dependency,
// canceled while pending) never will: -f exits as wait would, saying why;
// without -f, exit 3 (no logs, as the API's 404) names it. One that has
// not run yet: exit 3, and -f would wait for it.
func neverRan(c *cli.Context, h *home, j claim.Job) error {
	if c.Bool("json") && !c.IsSet("attempt") {
		_, err := fmt.Fprintln(c.App.Writer, "[]")
		return err
	}
	if !finished(j.State) {
		return withHint(&exitStatus{exitNotFound, fmt.Errorf("job %s exists but has not run yet: it is %s", j.ID, j.State)},
			"queuectl logs -f "+j.ID+"  (waits for its first run)")
	}
	why := string(j.State)
	if j.LastError != "" {
		why += ": " + j.LastError
	}
	if c.Bool("follow") {
		if j.State == claim.Dead {
			explain(c, h, j)
		} else {
			logf(c)("job %s ended without running: it is %s", j.ID, why)
		}
		return endedAs([]claim.Job{j})
	}
	return withHint(&exitStatus{exitNotFound, fmt.Errorf("job %s ended without running, so it has no logs: it is %s", j.ID, why)},
		"queuectl show "+j.ID)
}

// runByAttempt finds run n: runs are looked up by number, never by index,
// since purge and rm delete runs while logs reads them.
func runByAttempt(runs []claim.Run, n int) (claim.Run, bool) {
	for _, r := range runs {
		if r.Attempt == n {
			return r, true
		}
	}
	return claim.Run{}, false
}

// logPrinter prints one job's runs, one stream.
type logPrinter struct {
	c  *cli.Context
	h  *home
	id string
	// reach rides out, under -f, a store that cannot be reached for a
	// while: the job goes on meanwhile.
	reach *run.Reach
}

// log is the stream of run r that l prints.
func (l *logPrinter) log(r claim.Run) run.Log {
	return run.Log{Run: r, Stderr: l.c.Bool("stderr")}
}

// header writes run r's header line under --all; from is where its
// output comes from.
func (l *logPrinter) header(r claim.Run, from run.Origin) error {
	if !l.c.Bool("all") {
		return nil
	}
	lg, kept := l.log(r), ""
	switch {
	case from == run.FromTail:
		kept = report.KeptText(*lg.Kept()) + " of " + lg.Where()
	case from == run.FromNowhere && r.EndedAt.IsZero():
		kept = "nothing yet of " + lg.Where()
	case from == run.FromNowhere:
		kept = "nothing of " + lg.Where()
	}
	return report.RunHeader(l.c.App.Writer, r, kept)
}

// print writes run r's stream: its log file here, else the tail kept with
// the run, saying so on stderr.
func (l *logPrinter) print(r claim.Run) error {
	lg := l.log(r)
	text, from, err := lg.Open()
	if err != nil {
		return err
	}
	defer text.Close()
	if err := l.header(r, from); err != nil {
		return err
	}
	n, err := io.Copy(l.c.App.Writer, text)
	if err != nil {
		return err
	}
	l.note(lg, from)
	if n == 0 && !l.c.Bool("all") {
		l.empty(lg)
	}
	return nil
}

// empty says on stderr that the stream lg printed nothing when the other
// one did: a failure's reason is mostly on stderr, and `logs ID` prints
// stdout.
func (l *logPrinter) empty(lg run.Log) {
	other := run.Log{Run: lg.Run, Stderr: !lg.Stderr}
	size := other.Size()
	if size == 0 {
		return
	}
	cmd := "queuectl logs " + l.id
	if l.c.IsSet("attempt") {
		cmd += fmt.Sprintf(" --attempt %d", lg.Run.Attempt)
	}
	if other.Stderr {
		cmd += " --stderr"
	}
	logf(l.c)("%s is empty; %s has %s: %s", lg.Name(), other.Name(), report.Bytes(size), cmd)
}

// note says on stderr where a stream printed from elsewhere than its file
// came from, and where the full file is: stdout carries the output alone.
func (l *logPrinter) note(lg run.Log, from run.Origin) {
	r, say := lg.Run, logf(l.c)
	switch {
	case from == run.FromNowhere && r.EndedAt.IsZero():
		say("run %d of job %s runs on %s: its %s is in %s; its last %s are kept with the run when it ends (logs -f prints them then)",
			r.Attempt, r.JobID, r.HostName(), lg.Name(), lg.Where(), report.Bytes(claim.TailBytes))
	case from == run.FromNowhere:
		// No tail kept: its worker died before it could say what it printed.
		say("run %d of job %s ended %s on %s, which kept none of its %s: if it printed any, it is in %s",
			r.Attempt, r.JobID, r.Outcome, r.HostName(), lg.Name(), lg.Where())
	case from == run.FromTail && lg.Elsewhere():
		say("run %d of job %s ran on %s: printed %s of its %s, kept with the run; the full log is %s",
			r.Attempt, r.JobID, r.HostName(), report.KeptText(*lg.Kept()), lg.Name(), lg.Where())
	case from == run.FromTail:
		say("the %s log of run %d of job %s is gone (%s): printed %s of it, kept with the run",
			lg.Name(), r.Attempt, r.JobID, lg.Path(), report.KeptText(*lg.Kept()))
	}
}

// follow streams run r as it grows, then each later run, until the job has
// finished; it returns as wait would for the job.
func (l *logPrinter) follow(r claim.Run) error {
	ctx := l.c.Context
	out := &lineEnd{w: l.c.App.Writer}
	for {
		var err error
		if l.log(r).Elsewhere() {
			err = l.followElsewhere(r)
		} else if err = l.header(r, run.FromFile); err == nil {
			err = run.Follow(ctx, out, l.log(r).Path(), 100*time.Millisecond, l.reach.Riding(ctx, func() (bool, error) {
				runs, err := l.h.store.Runs(ctx, l.id)
				got, ok := runByAttempt(runs, r.Attempt)
				return err != nil || !ok || !got.EndedAt.IsZero(), err
			}))
		}
		if err != nil {
			return l.interrupted(err)
		}
		next, ended, j, err := l.next(r)
		if err != nil {
			return l.interrupted(err)
		}
		if next == nil {
			// Its stderr, if that is what was followed, was printed just
			// now: the verdict does not quote it again.
			if j.State == claim.Dead && l.c.Bool("stderr") {
				explainPrinted(l.c, l.h, j)
			} else {
				explainDead(l.c, l.h, []claim.Job{j})
			}
			return endedAs([]claim.Job{j})
		}
		if out.open {
			// the next run's output starts a line of its own, as it does
			// in its log
			if _, err := io.WriteString(out, "\n"); err != nil {
				return l.interrupted(err)
			}
		}
		if !l.c.Bool("all") {
			why := cmp.Or(ended.Error, ended.Outcome)
			logf(l.c)("job %s: run %d ended (%s); following run %d", l.id, r.Attempt, why, next.Attempt)
		}
		r = *next
	}
}

// lineEnd is a writer that remembers whether what went through it left a
// line open (its last byte no newline).
type lineEnd struct {
	w    io.Writer
	open bool
}

func (e *lineEnd) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if n > 0 {
		e.open = p[n-1] != '\n'
	}
	return n, err
}

// followElsewhere follows run r of another host, whose file cannot be read
// here: it waits for the run's end, polling the store, and then prints the
// tail kept with it, as `logs` would.
func (l *logPrinter) followElsewhere(r claim.Run) error {
	ctx := l.c.Context
	if r.EndedAt.IsZero() {
		logf(l.c)("run %d of job %s runs on %s (its %s is in %s): waiting for its end, to print the last %s kept with it",
			r.Attempt, l.id, r.HostName(), l.log(r).Name(), l.log(r).Where(), report.Bytes(claim.TailBytes))
	}
	err := l.wait(func() (bool, error) {
		runs, err := l.h.store.Runs(ctx, l.id)
		got, ok := runByAttempt(runs, r.Attempt)
		return err != nil || !ok || !got.EndedAt.IsZero(), err
	})
	if err != nil {
		return err
	}
	var runs []claim.Run
	err = l.wait(func() (bool, error) {
		var err error
		runs, err = l.h.store.RunsWithTails(ctx, l.id)
		return err == nil, err
	})
	if err != nil {
		return err
	}
	if ended, ok := runByAttempt(runs, r.Attempt); ok {
		r = ended
	}
	return l.print(r)
}

// next waits for the run after r, or for the job to finish without one;
// ended is r as stored by then, with how it ended.
func (l *logPrinter) next(r claim.Run) (next *claim.Run, ended claim.Run, j claim.Job, err error) {
	ctx := l.c.Context
	ended = r
	err = l.wait(func() (bool, error) {
		var err error
		if j, err = l.h.store.Get(ctx, l.id); err != nil {
			return false, err
		}
		runs, err := l.h.store.Runs(ctx, l.id)
		if err != nil {
			return false, err
		}
		for _, got := range runs {
			if got.Attempt == r.Attempt {
				ended = got
			}
			if got.Attempt > r.Attempt {
				next = &got
				return true, nil
			}
		}
		return finished(j.State), nil
	})
	return next, ended, j, err
}

// started waits for the job's first run, or for its end without one
// (dead through a dependency, canceled while pending), and returns the job
// and its runs, none in the second case.
func (l *logPrinter) started() (claim.Job, []claim.Run, error) {
	ctx := l.c.Context
	var j claim.Job
	var runs []claim.Run
	// Meanwhile it says what wait would of the job: no worker serves its
	// queue, it is paused, held, scheduled later, waits on such a job.
	w := &jobWatch{h: l.h, out: l.c.App.ErrWriter}
	err := l.wait(func() (bool, error) {
		var err error
		if j, err = l.h.store.Get(ctx, l.id); err != nil {
			return false, err
		}
		if runs, err = l.h.store.RunsWithTails(ctx, l.id); err != nil || len(runs) > 0 || finished(j.State) {
			return err == nil, err
		}
		w.look(ctx, []claim.Job{j})
		return false, nil
	})
	return j, runs, err
}

// wait calls done after every change to the store, and every poll, until
// it reports true or fails, or the command is interrupted; a store that
// cannot be reached for a while is ridden out (l.reach).
func (l *logPrinter) wait(done func() (bool, error)) error {
	ctx := l.c.Context
	return l.h.store.WaitUntil(ctx, l.h.config.PollInterval, l.reach.Riding(ctx, done))
}

// interrupted maps Ctrl-C to exit 130, as wait does.
func (l *logPrinter) interrupted(err error) error {
	if l.c.Context.Err() == context.Canceled {
		return &exitStatus{exitInterrupted, nil}
	}
	return err
}

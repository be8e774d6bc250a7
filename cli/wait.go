package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/suggest"
	"github.com/queuectl/queuectl/run"
	"github.com/urfave/cli/v2"
)

func waitCommand() *cli.Command {
	return &cli.Command{
		Name:      "wait",
		Usage:     "block until jobs are completed, dead or canceled",
		ArgsUsage: "ID... | --queue Q | --all",
		Description: `Exit 0 when all completed, 1 when any is dead or canceled, 124 on timeout. Warns on stderr when
no live worker serves the jobs' queues, or jobs wait in a paused queue (and again when that
changes), and once of each job that cannot move for a while: held (with the release to give),
scheduled past the --timeout or more than a minute ahead, or waiting on a job that is held,
scheduled so, or in a paused queue. On a terminal, shows how many are done. --queue Q and --all
wait for the jobs of queue Q, or every job, unfinished when wait starts (jobs enqueued later
are not waited for). A dead job: its last run's exit and the last lines of its stderr (or, dead
through a dependency, those of the job that caused it), on stderr, at a timeout too. --json: the jobs as they
ended, or stand at a timeout or Ctrl-C, as one array on stdout. Ctrl-C ends the wait, not
the jobs: it names those that go on, and the unfinished jobs they wait on (--after), with the
queuectl cancel that stops them. A store that goes away
meanwhile (a PostgreSQL server restarting) is waited out, as a worker does: wait says once on
stderr that it is unreachable and once that it is back, and --timeout still applies.

Example: id=$(queuectl enqueue -q --command 'make test') && queuectl wait "$id" --timeout 10m
Example: queuectl wait --queue nightly --timeout 1h`,
		Flags: []cli.Flag{durationFlag("timeout", 0, "give up after `D` (exit 124), e.g. 10m or 600 (seconds); 0: wait forever"),
			&cli.StringFlag{Name: "queue", Usage: "wait for every job of queue `Q` unfinished now"},
			&cli.BoolFlag{Name: "all", Usage: "wait for every job unfinished now"},
			&cli.BoolFlag{Name: "json", Usage: "print the jobs as they ended (or stand, on a timeout or Ctrl-C) as one JSON array"},
		},
		Action: withHome(func(c *cli.Context, h *home) error {
			// The timeout covers finding the jobs too: at 165,000 jobs
			// that alone took longer than a --timeout 3s.
			ctx := c.Context
			if d := durationOf(c, "timeout"); d > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, d)
				defer cancel()
			}
			ids, jobs, err := waitedFor(ctx, c, h)
			if errors.Is(err, context.DeadlineExceeded) {
				if c.Bool("json") {
					if perr := printer(c).Jobs(jobs); perr != nil {
						return perr
					}
				}
				return &exitStatus{exitTimeout, fmt.Errorf("timed out after %v finding the jobs to wait for (%d found so far)", durationOf(c, "timeout"), len(ids))}
			}
			if err != nil || len(ids) == 0 {
				if err == nil && c.Bool("json") {
					err = printer(c).Jobs(nil)
				}
				return err
			}
			jobs, err = watchJobs(ctx, c, h, ids, jobs)
			if c.Bool("json") && len(jobs) != len(ids) && ctx.Err() != nil {
				// Ended before its first look: read the jobs once more, as
				// they stand, for the array below.
				read, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				if got, gerr := h.store.GetAll(read, ids); gerr == nil {
					jobs = got
				}
				cancel()
			}
			// --json prints the jobs as they ended, or as they stand when a
			// timeout or Ctrl-C ends the wait: a script gets one array either
			// way, and tells the two apart by the exit code.
			if c.Bool("json") && len(jobs) == len(ids) {
				if perr := printer(c).Jobs(jobs); perr != nil {
					return perr
				}
			}
			switch {
			case errors.Is(err, context.DeadlineExceeded):
				explainDead(c, h, jobs) // a failure already certain is said, not only the timeout
				return &exitStatus{exitTimeout, fmt.Errorf("timed out after %v waiting for %s", durationOf(c, "timeout"), unfinished(ids, jobs))}
			case errors.Is(err, context.Canceled):
				sayLeft(c, h, ids, jobs)
				return &exitStatus{exitInterrupted, nil}
			case err != nil:
				return err
			}
			explainDead(c, h, jobs)
			return endedAs(jobs)
		}),
	}
}

// waitedFor returns the ids wait waits for: its arguments', or those of
// the unfinished jobs --queue or --all name, with those jobs as they were
// read: wait's first look at them, which a big queue would otherwise take
// a second read of the store for. A timeout while it reads them returns
// the ids and jobs read so far, with ctx's error.
func waitedFor(ctx context.Context, c *cli.Context, h *home) ([]string, []claim.Job, error) {
	refs, err := args(c, 0, -1)
	if err != nil {
		return nil, nil, err
	}
	if n := len(refs); (n > 0) == (c.Bool("all") || c.IsSet("queue")) || c.Bool("all") && c.IsSet("queue") {
		return nil, nil, withHint(usagef("give job ids, --queue Q or --all%s", givenTwice(n > 0, c.IsSet("queue"), c.Bool("all"))), "queuectl wait ID...  or  queuectl wait --queue Q  or  queuectl wait --all")
	}
	if len(refs) > 0 {
		ids, err := h.store.ResolveAll(ctx, refs)
		return ids, nil, err
	}
	queue, err := queueOf(c)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	var jobs []claim.Job
	for _, st := range claim.States {
		if st.Finished() {
			continue
		}
		for j, err := range h.store.Jobs(ctx, claim.Filter{State: st, Queue: queue}) {
			if err != nil {
				return ids, jobs, err
			}
			ids = append(ids, j.ID)
			jobs = append(jobs, j)
		}
	}
	if len(ids) == 0 {
		if queue != "" && unknownQueue(c, h, queue) {
			return nil, nil, nil
		}
		logf(c)("no unfinished job to wait for")
	}
	return ids, jobs, nil
}

// unknownQueue says on stderr, and reports, that no job, setting or pause
// names queue q, with the nearest queue that one does: wait --queue of a
// typo would otherwise pass for a queue whose jobs are done, and a script
// go on while they run. Not an error: a queue's jobs may all be purged.
func unknownQueue(c *cli.Context, h *home, q string) bool {
	known := knownQueues(c.Context, h.store)
	if known == nil || slices.Contains(known, q) {
		return false
	}
	logf(c)("warning: no job, setting or pause names queue %s", q)
	if near := suggest.Nearest(q, known); near != "" {
		logf(c)("hint: did you mean %s? queuectl wait --queue %s", near, near)
	}
	return true
}

// endedAs is wait's verdict on finished jobs: nil when all completed, exit 1
// naming the others, and the hint showing each (show takes one id) up to
// whyJobs of them.
func endedAs(jobs []claim.Job) error {
	byState := map[claim.State][]string{}
	var ended []string
	for _, j := range jobs {
		if j.State != claim.Completed {
			byState[j.State] = append(byState[j.State], j.ID)
			ended = append(ended, j.ID)
		}
	}
	if len(ended) == 0 {
		return nil
	}
	var says []string
	for _, st := range []claim.State{claim.Dead, claim.Canceled} {
		if ids := byState[st]; len(ids) > 0 {
			says = append(says, fmt.Sprintf("%s: %s", st, strings.Join(ids, " ")))
		}
	}
	var shows []string
	for _, id := range ended[:min(len(ended), whyJobs)] {
		shows = append(shows, "queuectl show "+id)
	}
	hint := strings.Join(shows, "; ")
	if more := len(ended) - whyJobs; more > 0 {
		hint += fmt.Sprintf(" (and so for the %d more named above)", more)
	}
	return withHint(&exitStatus{exitFailure, errors.New(strings.Join(says, "; "))}, hint)
}

// unfinished names the jobs of ids not finished at the last look, jobs:
// those a timed-out wait still waits for (all of ids when it had no look).
// Past shownUnfinished of them it names the first few and counts the
// rest: a wait --all of a big queue named every id, megabytes on one line
// of stderr. --json carries them all.
func unfinished(ids []string, jobs []claim.Job) string {
	left := unfinishedIDs(ids, jobs)
	if len(left) <= shownUnfinished {
		return strings.Join(left, " ")
	}
	const first = 5
	return fmt.Sprintf("%d jobs: %s and %d more", len(left), strings.Join(left[:first], " "), len(left)-first)
}

// unfinishedIDs are the ids of the jobs not finished at the last look,
// jobs (all of ids when it had no look).
func unfinishedIDs(ids []string, jobs []claim.Job) []string {
	if len(jobs) != len(ids) {
		return ids
	}
	var left []string
	for _, j := range jobs {
		if !finished(j.State) {
			left = append(left, j.ID)
		}
	}
	return left
}

// sayLeft says on stderr, when Ctrl-C ends a wait, that the jobs it waited
// for go on, and the unfinished jobs they wait on (--after), with the
// cancel that stops them all: wait only watches, and a make target of
// enqueue and wait stopped by Ctrl-C otherwise left its jobs running
// without a word.
func sayLeft(c *cli.Context, h *home, ids []string, jobs []claim.Job) {
	left := unfinishedIDs(ids, jobs)
	switch {
	case len(left) == 0:
		return
	case len(left) > shownUnfinished:
		logf(c)("%s go on; queuectl cancel ID... stops them", unfinished(ids, jobs))
		return
	}
	// ctx is canceled by now: these reads get a little time of their own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Context), 2*time.Second)
	defer cancel()
	deps := waitedOn(ctx, h, left)
	what := "job " + left[0] + " goes on"
	if len(left) > 1 {
		what = "jobs " + strings.Join(left, " ") + " go on"
	}
	switch {
	case len(deps) > 0 && len(left) == 1:
		what += ", and " + strings.Join(deps, " ") + ", which it waits on"
	case len(deps) > 0:
		what += ", and " + strings.Join(deps, " ") + ", which they wait on"
	}
	all := strings.Join(append(left, deps...), " ")
	if len(left)+len(deps) == 1 {
		logf(c)("%s; stop it with: queuectl cancel %s", what, all)
		return
	}
	logf(c)("%s; stop them with: queuectl cancel %s", what, all)
}

// waitedOn returns the unfinished jobs that the jobs of ids wait on, and
// those wait on in turn (up to stallDepth), ids excluded: what a pipeline
// of --after steps runs before its last, which wait waits for alone. Each
// job is read once; a job it cannot read is left out.
func waitedOn(ctx context.Context, h *home, ids []string) []string {
	seen := map[string]bool{}
	var next []claim.Job
	for _, id := range ids {
		seen[id] = true
		if j, err := h.store.Get(ctx, id); err == nil {
			next = append(next, j)
		}
	}
	var deps []string
	for depth := 0; depth < stallDepth && len(next) > 0 && len(deps) < shownUnfinished; depth++ {
		var more []claim.Job
		for _, j := range next {
			for _, d := range j.WaitingOn {
				if seen[d] {
					continue
				}
				seen[d] = true
				if dep, err := h.store.Get(ctx, d); err == nil && !finished(dep.State) {
					deps = append(deps, d)
					more = append(more, dep)
				}
			}
		}
		next = more
	}
	return deps
}

// shownUnfinished is how many unfinished jobs a timed-out wait names one by
// one.
const shownUnfinished = 10

// watchJobs blocks until every job in ids has finished and returns them.
// jobs is a first look at them, or nil. On the way it says on stderr when
// no live worker serves the queues of the jobs still to run (a wait that
// would never end), or they wait in paused queues, and again when that
// changes; and once of each job that cannot move for a while (held,
// scheduled later, waiting on such a job: stall). On a terminal it keeps a
// progress line. A store it cannot reach for a while it rides out
// (run.Reach), saying so: the jobs go on.
//
// A look reads in one statement (Store.GetAll) only the jobs not finished
// at the last one, and keeps the others as they ended; when all are seen
// finished, one more read of every job confirms it (a job restarted
// meanwhile is waited for again). A wait --all of 165,000 jobs that read
// each of them on its own at every look spent 9 s of CPU in 15 s.
func watchJobs(ctx context.Context, c *cli.Context, h *home, ids []string, jobs []claim.Job) ([]claim.Job, error) {
	w := &jobWatch{h: h, out: c.App.ErrWriter, progress: isTerminal(c.App.ErrWriter)}
	w.deadline, _ = ctx.Deadline()
	defer w.clear()
	say := func(format string, a ...any) { w.clear(); logf(c)(format, a...) }
	r := reach(say, "the jobs go on, and wait waits for the store to come back")
	var (
		open   []int         // the indexes in ids of the jobs not finished at the last look
		next   int           // open[next:] have not been seen finished since
		looked time.Time     // when the last look began
		gap    time.Duration // how long to the next look: wholeLook, or more for a slow one
	)
	settle := func(start time.Time) {
		open, next = open[:0], 0
		for i, j := range jobs {
			if !finished(j.State) {
				open = append(open, i)
			}
		}
		looked, gap = start, max(wholeLook, lookShare*time.Since(start))
	}
	given := jobs != nil // the first look is given
	err := h.store.WaitUntil(ctx, h.config.PollInterval, r.Riding(ctx, func() (bool, error) {
		start := time.Now()
		switch {
		case given:
			given = false
		case jobs == nil:
			all, err := h.store.GetAll(ctx, ids)
			if err != nil {
				return false, err
			}
			jobs = all
		case time.Since(looked) < gap && next < len(open):
			// Between looks, read on from the first job not seen
			// finished, and stop at the first that still is not.
			for ; next < len(open); next++ {
				j, err := h.store.Get(ctx, ids[open[next]])
				if err != nil {
					return false, err
				}
				if !finished(j.State) {
					return false, nil
				}
			}
			fallthrough
		default:
			if len(open) > 0 {
				left := make([]string, len(open))
				for k, i := range open {
					left[k] = ids[i]
				}
				now, err := h.store.GetAll(ctx, left)
				if err != nil {
					return false, err
				}
				for k, i := range open {
					jobs[i] = now[k]
				}
			}
			if !slices.ContainsFunc(jobs, func(j claim.Job) bool { return !finished(j.State) }) {
				all, err := h.store.GetAll(ctx, ids)
				if err != nil {
					return false, err
				}
				jobs = all
			}
		}
		settle(start)
		return w.look(ctx, jobs), nil
	}))
	return jobs, err
}

// reach is how a command that follows jobs (run, wait, logs -f) rides out
// a store it cannot reach, as the worker does: it says so once with say,
// and what goes on meanwhile, and once when the store is back.
func reach(say func(format string, a ...any), meanwhile string) *run.Reach {
	return &run.Reach{
		Lost: func(err error) { say("store unreachable (%v); %s", err, meanwhile) },
		Back: func(away time.Duration) { say("store reachable again after %v", away.Round(100*time.Millisecond)) },
	}
}

// wholeLook bounds how often wait reads the jobs it waits for (for its
// progress line, and the queues no worker serves): a busy store changes
// hundreds of times a second, and a wait for 500 jobs that read them all
// at each change took most of a core beside the worker running them. In
// between, each change costs a read of the first unfinished job; when it
// and all after it are found finished, a look confirms it. A look that
// took long (100,000 jobs unfinished) is followed by a gap of lookShare
// times its length, so that wait takes at most a fraction of a core.
const (
	wholeLook = 250 * time.Millisecond
	lookShare = 4
)

// jobWatch is what wait says while it waits.
type jobWatch struct {
	h        *home
	out      io.Writer
	progress bool              // out is a terminal: keep a progress line
	shown    bool              // a progress line is on the screen
	checked  time.Time         // when the workers were last looked at
	unserved string            // the queues no live worker served at that look
	paused   string            // the paused queues jobs waited in at that look
	stalled  map[string]string // the jobs that could not move at that look: stall.key by id
	deadline time.Time         // when the wait gives up; zero: never
}

// workerCheck bounds how often wait lists the workers: it wakes on every
// change to the store, and a busy store changes thousands of times a second.
const workerCheck = time.Second

// look takes in the jobs' states and reports whether all have finished.
func (w *jobWatch) look(ctx context.Context, jobs []claim.Job) bool {
	counts := map[claim.State]int{}
	var queues, claimable []string // of the jobs not finished; of those a claim may take
	done := 0
	for _, j := range jobs {
		counts[j.State]++
		if finished(j.State) {
			done++
			continue
		}
		if !slices.Contains(queues, j.Queue) {
			queues = append(queues, j.Queue)
		}
		if (j.State == claim.Pending || j.State == claim.Failed) && !slices.Contains(claimable, j.Queue) {
			claimable = append(claimable, j.Queue)
		}
	}
	if done < len(jobs) && time.Since(w.checked) >= workerCheck {
		w.checked = time.Now()
		w.checkServed(ctx, queues)
		w.checkPaused(ctx, claimable)
		w.checkStalls(ctx, jobs)
	}
	if w.progress && len(jobs) > 0 {
		var parts []string
		for _, st := range claim.States {
			if counts[st] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
			}
		}
		fmt.Fprintf(w.out, "\r\x1b[Kwaiting: %d of %d done (%s)", done, len(jobs), strings.Join(parts, ", "))
		w.shown = true
	}
	return done == len(jobs)
}

// checkServed warns when no live worker serves some of queues, and says so
// when that changes.
func (w *jobWatch) checkServed(ctx context.Context, queues []string) {
	// A worker still starting may serve them once registered (`worker
	// start &` then `wait` in a script is no mistake). Asked before the
	// registry is read: one that registers in between is in it.
	starting := run.WorkerStarting(w.h.dir)
	// A short --timeout must not cut the first look short: the warning is
	// what tells a user why the wait timed out.
	live, err := liveWorkers(context.WithoutCancel(ctx), w.h)
	if err != nil {
		return // the wait itself will meet the store's error
	}
	var unserved []string
	for _, q := range queues {
		if !served(q, live) {
			unserved = append(unserved, q)
		}
	}
	if len(unserved) > 0 && starting {
		return // look again at the next check
	}
	w.sayChanged(&w.unserved, unserved, "no live worker serves queue %s; the jobs wait until one does",
		"queuectl worker start --queue "+strings.Join(unserved, " --queue "), "a worker serves queue %s now")
}

// checkPaused warns when jobs still to start wait in paused queues (no
// worker starts them until resume), and says so when that changes.
func (w *jobWatch) checkPaused(ctx context.Context, queues []string) {
	all, err := w.h.store.Paused(context.WithoutCancel(ctx))
	if err != nil {
		return // the wait itself will meet the store's error
	}
	var paused []string
	for _, q := range queues {
		if slices.Contains(all, claim.AllQueues) || slices.Contains(all, q) {
			paused = append(paused, q)
		}
	}
	hint := "queuectl resume --queue " + strings.Join(paused, " && queuectl resume --queue ")
	if slices.Contains(all, claim.AllQueues) {
		hint = "queuectl resume"
	}
	w.sayChanged(&w.paused, paused, "queue %s is paused; its jobs wait until it is resumed", hint, "queue %s is resumed")
}

// sayChanged says what changed in the queues a condition holds for, since
// *said: a warning naming them, and its hint, when some do; that it holds
// no more, naming those said, when none does.
func (w *jobWatch) sayChanged(said *string, queues []string, warning, hint, over string) {
	sort.Strings(queues)
	now := strings.Join(queues, ", ")
	if now == *said {
		return
	}
	w.clear()
	if now != "" {
		fmt.Fprintf(w.out, "queuectl: warning: "+warning+"\n", now)
		fmt.Fprintf(w.out, "queuectl: hint: %s\n", hint)
	} else {
		fmt.Fprintf(w.out, "queuectl: "+over+"\n", *said)
	}
	*said = now
}

// served reports whether a live worker that is not stopping claims from q.
func served(q string, live []claim.WorkerInfo) bool {
	for _, wk := range live {
		if !wk.Stopping && (len(wk.Queues) == 0 || slices.Contains(wk.Queues, q)) {
			return true
		}
	}
	return false
}

// clear removes the progress line, so that the next line starts clean.
func (w *jobWatch) clear() {
	if w.shown {
		fmt.Fprint(w.out, "\r\x1b[K")
		w.shown = false
	}
}

// isTerminal reports whether s, a reader or a writer, is a terminal.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

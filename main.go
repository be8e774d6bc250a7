// Command queuectl runs shell jobs in the background: jobs arrive as JSON
// files dropped in a spool directory or through `queuectl enqueue`, wait in
// SQLite, and run in `queuectl worker start` processes. See README.md.
//
// This file only wires commands to the packages: claim (the store), spool
// (spool, rejected/ and dead/ files), run (workers) and report (output).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes, SPEC §5. README.md repeats this table.
const (
	exitOK          = 0   // success
	exitFailure     = 1   // runtime error, or a waited-for job is dead
	exitUsage       = 2   // usage error or invalid input
	exitNotFound    = 3   // no such job
	exitConflict    = 4   // duplicate id, or the job is in the wrong state
	exitTimeout     = 124 // wait timed out
	exitInterrupted = 130 // interrupted (second signal)
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newApp().RunContext(ctx, os.Args)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err as `queuectl: error: …` (and a hint where the fix is
// known) and maps it to the exit codes above.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var coded *exitStatus
	if errors.As(err, &coded) && coded.err == nil {
		return coded.code
	}
	fmt.Fprintf(stderr, "queuectl: error: %v\n", err)
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		fmt.Fprintf(stderr, "queuectl: hint: %s\n", h.Hint())
	}
	switch {
	case errors.As(err, &coded):
		return coded.code
	case errors.Is(err, errUsage), errors.Is(err, claim.ErrInvalid):
		return exitUsage
	case errors.Is(err, claim.ErrNotFound):
		return exitNotFound
	case errors.Is(err, claim.ErrConflict):
		return exitConflict
	case errors.Is(err, run.ErrInterrupted), errors.Is(err, context.Canceled):
		return exitInterrupted // context.Canceled: only a signal cancels c.Context
	}
	return exitFailure
}

// errUsage marks command-line mistakes (exit 2).
var errUsage = errors.New("usage")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// hinted carries the fix for an error, printed as `queuectl: hint: …`.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Hint() string  { return h.hint }
func (h *hinted) Unwrap() error { return h.err }

func withHint(err error, hint string) error { return &hinted{err, hint} }

// exitStatus is an exit code chosen by a command; err nil means the command
// already said what there was to say.
type exitStatus struct {
	code int
	err  error
}

func (e *exitStatus) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitStatus) Unwrap() error { return e.err }

func newApp() *cli.App {
	app := &cli.App{
		Name:    "queuectl",
		Usage:   "run shell jobs in the background, from a spool directory or the command line",
		Version: version,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "home", Usage: "queuectl home `DIR` (default $QUEUECTL_HOME, else ~/.queuectl)"},
			&cli.StringFlag{Name: "db", Usage: "database `PATH` (default $QUEUECTL_DB_PATH, else HOME/queue.db)"},
		},
		Commands: []*cli.Command{
			enqueueCommand(), workerCommand(), statusCommand(), listCommand(), showCommand(),
			dlqCommand(), configCommand(), watchCommand(), ingestCommand(), waitCommand(), logsCommand(),
			purgeCommand(), benchCommand(),
		},
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		Suggest:              true,
		ExitErrHandler:       func(*cli.Context, error) {},
		OnUsageError:         usageError,
		CommandNotFound: func(c *cli.Context, name string) {
			fmt.Fprintf(c.App.ErrWriter, "queuectl: error: no command %q\nqueuectl: hint: see: queuectl --help\n", name)
			cli.OsExiter(exitUsage)
		},
	}
	setUsageError(app.Commands)
	return app
}

// usageError makes a flag the parser refuses exit 2 with a hint, instead of
// urfave/cli's exit 1 and a help text on stdout.
func usageError(c *cli.Context, err error, _ bool) error {
	name := "queuectl"
	if c.Command != nil && c.Command.HelpName != "" {
		name = c.Command.HelpName // "queuectl dlq retry"; FullName() is only "retry"
	}
	return withHint(usagef("%v", err), "see: "+name+" --help")
}

// setUsageError gives every command the app's usageError: urfave/cli calls
// only the running command's own.
func setUsageError(cmds []*cli.Command) {
	for _, cmd := range cmds {
		if cmd.OnUsageError == nil {
			cmd.OnUsageError = usageError
		}
		setUsageError(cmd.Subcommands)
	}
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"}

// home is an opened queuectl home: its directories and its store.
type home struct {
	dir    string
	dirs   spool.Dirs
	logs   string
	store  *claim.Store
	config claim.Config
}

// openHome resolves --home/--db, creates the home (0700) and opens the store.
// The caller closes h.store.
func openHome(c *cli.Context) (*home, error) {
	dir := c.String("home")
	if dir == "" {
		dir = os.Getenv("QUEUECTL_HOME")
	}
	if dir == "" {
		userHome, err := os.UserHomeDir()
		if err != nil {
			return nil, withHint(err, "set QUEUECTL_HOME or pass --home DIR")
		}
		dir = filepath.Join(userHome, ".queuectl")
	}
	h := &home{dir: dir, dirs: spool.DirsOf(dir), logs: filepath.Join(dir, "logs")}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, withHint(fmt.Errorf("create home: %w", err), "pass --home DIR on a writable disk")
	}
	if err := h.dirs.Make(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(h.logs, 0o700); err != nil {
		return nil, fmt.Errorf("create logs directory: %w", err)
	}
	dbPath := c.String("db")
	if dbPath == "" {
		dbPath = os.Getenv("QUEUECTL_DB_PATH")
	}
	if dbPath == "" {
		dbPath = filepath.Join(dir, "queue.db")
	}
	var err error
	if h.store, err = claim.Open(dbPath); err != nil {
		return nil, err
	}
	if h.config, err = h.store.Config(c.Context); err != nil {
		h.store.Close()
		return nil, err
	}
	return h, nil
}

// withHome opens the home around a command's action.
func withHome(action func(c *cli.Context, h *home) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		h, err := openHome(c)
		if err != nil {
			return err
		}
		defer h.store.Close()
		return action(c, h)
	}
}

// printer renders to stdout, in colour only on a terminal without NO_COLOR.
func printer(c *cli.Context) report.Printer {
	_, noColor := os.LookupEnv("NO_COLOR")
	color := !noColor && isatty.IsTerminal(os.Stdout.Fd())
	return report.Printer{Out: c.App.Writer, JSON: c.Bool("json"), Color: color, Now: time.Now}
}

// args checks the count of positional arguments. urfave/cli stops parsing
// flags at the first argument, so a flag after one would be taken for an
// argument: refuse it rather than ignore it.
func args(c *cli.Context, min, max int) ([]string, error) {
	a := c.Args().Slice()
	for _, s := range a {
		if strings.HasPrefix(s, "-") && s != "-" {
			return nil, withHint(usagef("flag %s after an argument", s),
				"put flags before arguments: "+c.Command.HelpName+" "+s+" …")
		}
	}
	if len(a) < min || (max >= 0 && len(a) > max) {
		return nil, withHint(usagef("wrong number of arguments (%d)", len(a)),
			strings.TrimSpace("usage: "+c.Command.HelpName+" "+c.Command.ArgsUsage))
	}
	return a, nil
}

func logf(c *cli.Context) func(string, ...any) {
	return func(format string, a ...any) {
		fmt.Fprintf(c.App.ErrWriter, "queuectl: "+format+"\n", a...)
	}
}

func enqueueCommand() *cli.Command {
	return &cli.Command{
		Name:      "enqueue",
		Usage:     "add a job to the queue",
		ArgsUsage: "[JSON | -]",
		Description: `Give the job as a JSON spec (argument, -f FILE, or - for stdin: one object,
or JSON lines for a batch stored in one transaction), or with --command and flags.

Example: queuectl enqueue --command 'pg_dump app > /backup/app.sql' --timeout 30m --unique-key nightly-db`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the job spec from `FILE`"},
			&cli.StringFlag{Name: "command", Aliases: []string{"c"}, Usage: "shell `CMD` to run"},
			&cli.StringFlag{Name: "id", Usage: "job id (default: generated)"},
			&cli.IntFlag{Name: "max-retries", Usage: "runs before the job is dead (default: config max-retries)"},
			&cli.IntFlag{Name: "backoff-base", Usage: "seconds; wait base^n after the n-th failed run"},
			&cli.IntFlag{Name: "priority", Usage: "higher runs first"},
			&cli.StringFlag{Name: "run-at", Usage: "not before `TIME` (RFC 3339)"},
			&cli.StringFlag{Name: "delay", Usage: "not before `DURATION` from now"},
			&cli.StringFlag{Name: "timeout", Usage: "kill the job after `DURATION`"},
			&cli.StringFlag{Name: "queue", Usage: "queue `NAME` (default: default)"},
			&cli.StringFlag{Name: "unique-key", Usage: "skip if a live job has this `KEY`"},
			&cli.StringSliceFlag{Name: "env", Usage: "set `K=V` in the job's environment (repeatable)"},
			&cli.StringFlag{Name: "cwd", Usage: "run in `DIR` (absolute)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the job id"},
			jsonFlag,
		},
		Action: withHome(func(c *cli.Context, h *home) error {
			jobs, err := jobsToEnqueue(c)
			if err != nil {
				return err
			}
			rs, err := h.store.EnqueueAll(c.Context, jobs)
			if err != nil {
				return err
			}
			for _, r := range rs {
				if r.Outcome == claim.Skipped {
					logf(c)("skipped: job %s with unique key %q is %s", r.Job.ID, r.Job.UniqueKey, r.Job.State)
				}
			}
			return printer(c).Enqueued(rs, c.Bool("quiet"))
		}),
	}
}

// jobsToEnqueue reads the job(s) from exactly one of: argument, -f, stdin, --command.
func jobsToEnqueue(c *cli.Context) ([]claim.NewJob, error) {
	a, err := args(c, 0, 1)
	if err != nil {
		return nil, err
	}
	sources := len(a)
	for _, name := range []string{"file", "command"} {
		if c.IsSet(name) {
			sources++
		}
	}
	if sources != 1 {
		return nil, withHint(usagef("give the job one way: a JSON argument, -f FILE, - (stdin) or --command"),
			`queuectl enqueue '{"command": "echo hi"}'  or  queuectl enqueue --command 'echo hi'`)
	}
	switch {
	case c.IsSet("command"):
		nj, err := jobFromFlags(c)
		return []claim.NewJob{nj}, err
	case c.IsSet("file"):
		f, err := os.Open(c.String("file"))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", claim.ErrInvalid, err)
		}
		defer f.Close()
		data, err := readInput(f, c.String("file"))
		if err != nil {
			return nil, err
		}
		return claim.ParseBatch(data)
	case a[0] == "-":
		data, err := readInput(c.App.Reader, "stdin")
		if err != nil {
			return nil, err
		}
		return claim.ParseBatch(data)
	}
	nj, err := claim.ParseSpec([]byte(a[0]))
	return []claim.NewJob{nj}, err
}

// maxInput bounds what `enqueue -f` and `enqueue -` read.
const maxInput = 64 << 20

// readInput reads a batch of job specs, refusing input over maxInput whole:
// cut short at a line's end, it would store part of the batch silently.
func readInput(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", claim.ErrInvalid, err)
	}
	if len(data) > maxInput {
		return nil, withHint(fmt.Errorf("%w: %s is over 64 MiB", claim.ErrInvalid, name),
			"split the jobs over several enqueues")
	}
	return data, nil
}

func jobFromFlags(c *cli.Context) (claim.NewJob, error) {
	nj := claim.NewJob{Command: c.String("command"), ID: c.String("id"), Priority: c.Int("priority"),
		Queue: c.String("queue"), UniqueKey: c.String("unique-key"), Cwd: c.String("cwd")}
	if c.IsSet("max-retries") {
		n := c.Int("max-retries")
		nj.MaxRetries = &n
	}
	if c.IsSet("backoff-base") {
		n := c.Int("backoff-base")
		nj.BackoffBase = &n
	}
	var err error
	if s := c.String("run-at"); s != "" {
		if nj.RunAt, err = time.Parse(time.RFC3339, s); err != nil {
			return nj, usagef("--run-at %q is not an RFC 3339 time such as 2026-11-21T03:00:00Z", s)
		}
	}
	if s := c.String("delay"); s != "" {
		if nj.Delay, err = claim.ParseDuration(s); err != nil {
			return nj, fmt.Errorf("--delay: %w", err)
		}
	}
	if s := c.String("timeout"); s != "" {
		d, err := claim.ParseDuration(s)
		if err != nil {
			return nj, fmt.Errorf("--timeout: %w", err)
		}
		nj.Timeout = &d
	}
	for _, kv := range c.StringSlice("env") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nj, usagef("--env %q is not K=V", kv)
		}
		if nj.Env == nil {
			nj.Env = map[string]string{}
		}
		nj.Env[k] = v
	}
	return nj, nj.Validate()
}

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:            "worker",
		Usage:           "run jobs (start), or stop running workers (stop)",
		Description:     "Example: queuectl worker start --count 4",
		HideHelpCommand: true,
		Subcommands: []*cli.Command{{
			Name:  "start",
			Usage: "run jobs in the foreground until stopped",
			Description: `Runs up to --count jobs at a time and ingests the spool. Several workers may
share one home. First SIGINT/SIGTERM (or 'queuectl worker stop'): finish running jobs, exit 0.
Second: stop running jobs, put them back to pending, exit 130.

Example: queuectl worker start --count 4 --queue default --queue mail`,
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "count", Aliases: []string{"n"}, Value: 1, Usage: "jobs to run at once"},
				&cli.StringSliceFlag{Name: "queue", Usage: "run only jobs of queue `Q` (repeatable)"},
				&cli.BoolFlag{Name: "drain", Usage: "exit 0 once nothing is runnable"},
				&cli.BoolFlag{Name: "no-spool", Usage: "do not ingest the spool directory"},
			},
			Action: withHome(workerStart),
		}, {
			Name:        "stop",
			Usage:       "ask every worker of this home to finish its jobs and exit",
			Description: `Example: queuectl worker stop --wait --timeout 1m`,
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "wait", Usage: "wait until the workers have exited"},
				&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "with --wait: give up after `D` (exit 124)"},
			},
			Action: withHome(workerStop),
		}},
	}
}

func workerStart(c *cli.Context, h *home) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	if c.Int("count") < 1 || c.Int("count") > 1024 {
		return usagef("--count %d: give 1 to 1024 slots", c.Int("count"))
	}
	soft, hard, release := run.TwoStage(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer release()
	if err := spool.SyncDead(c.Context, h.store, h.dirs.Dead); err != nil {
		logf(c)("dead/: %v", err)
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
		// already dropped.
		if _, err := newWatcher(c, h).Pass(c.Context); err != nil {
			return err
		}
		go func() { ingesting <- newWatcher(c, h).Run(watching) }()
	}
	w := &run.Worker{Store: h.store, Config: h.config, Slots: c.Int("count"), Queues: c.StringSlice("queue"),
		LogDir: h.logs, Drain: c.Bool("drain"), OnDead: onDead(c, h), Log: logf(c)}
	err := w.Run(soft, hard)
	endWatch()
	return firstErr(err, <-ingesting)
}

// onDead writes dead/<id>.json for a job that just died.
func onDead(c *cli.Context, h *home) func(context.Context, claim.Job) {
	return func(ctx context.Context, j claim.Job) {
		runs, err := h.store.Runs(ctx, j.ID)
		if err == nil {
			err = spool.WriteDead(h.dirs.Dead, j, runs)
		}
		if err != nil {
			logf(c)("job %s is dead, but dead/%s.json: %v", j.ID, j.ID, err)
		}
	}
}

func newWatcher(c *cli.Context, h *home) *spool.Watcher {
	return &spool.Watcher{Dirs: h.dirs, Store: h.store, Rescan: h.config.SpoolRescan, Log: logf(c)}
}

func workerStop(c *cli.Context, h *home) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	n, err := h.store.RequestStop(c.Context)
	if err != nil {
		return err
	}
	logf(c)("asked %d worker(s) to stop", n)
	if !c.Bool("wait") {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	// Workers that exit cleanly wake us; the poll catches crashed ones.
	err = h.store.WaitUntil(ctx, 100*time.Millisecond, func() (bool, error) {
		live, err := liveWorkers(ctx, h)
		return len(live) == 0, err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// Counted outside the expired context, which may have cut the last look
	// short: an error there must not read as "0 still running".
	live, err := liveWorkers(c.Context, h)
	if err != nil || len(live) == 0 {
		return err
	}
	return &exitStatus{exitTimeout, fmt.Errorf("%d worker(s) still running after %v", len(live), c.Duration("timeout"))}
}

// liveWorkers lists the registered workers that are still running.
func liveWorkers(ctx context.Context, h *home) ([]claim.WorkerInfo, error) {
	all, err := h.store.Workers(ctx)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	var live []claim.WorkerInfo
	for _, w := range all {
		if !run.Gone(w, host, time.Now(), h.config.Lease) {
			live = append(live, w)
		}
	}
	return live, nil
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:        "status",
		Usage:       "show job counts per state, spool files waiting and live workers",
		Description: "Example: queuectl status --json | jq .pending",
		Flags:       []cli.Flag{jsonFlag},
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			counts, err := h.store.Counts(c.Context)
			if err != nil {
				return err
			}
			waiting, rejected, err := spool.Count(h.dirs)
			if err != nil {
				return err
			}
			workers, err := liveWorkers(c.Context, h)
			if err != nil {
				return err
			}
			return printer(c).Status(report.Status{Counts: counts, SpoolWaiting: waiting, Rejected: rejected, Workers: workers})
		}),
	}
}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:        "list",
		Usage:       "list jobs, oldest first",
		Description: "Example: queuectl list --state failed --limit 20",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "state", Usage: "only jobs in `STATE` (pending, processing, completed, failed, dead)"},
			&cli.StringFlag{Name: "queue", Usage: "only jobs of queue `Q`"},
			&cli.IntFlag{Name: "limit", Usage: "at most `N` jobs (0: all)"},
			jsonFlag,
		},
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			f := claim.Filter{Queue: c.String("queue"), Limit: c.Int("limit")}
			if c.IsSet("state") {
				st, err := claim.ParseState(c.String("state"))
				if err != nil {
					return err
				}
				f.State = st
			}
			jobs, err := h.store.List(c.Context, f)
			if err != nil {
				return err
			}
			return printer(c).Jobs(jobs)
		}),
	}
}

func showCommand() *cli.Command {
	return &cli.Command{
		Name:        "show",
		Usage:       "show one job with every field and every run",
		ArgsUsage:   "ID",
		Description: "Example: queuectl show --json nightly-db",
		Flags:       []cli.Flag{jsonFlag},
		Action: withHome(func(c *cli.Context, h *home) error {
			a, err := args(c, 1, 1)
			if err != nil {
				return err
			}
			j, err := h.store.Get(c.Context, a[0])
			if err != nil {
				return err
			}
			runs, err := h.store.Runs(c.Context, j.ID)
			if err != nil {
				return err
			}
			return printer(c).Job(j, runs)
		}),
	}
}

func dlqCommand() *cli.Command {
	return &cli.Command{
		Name:            "dlq",
		Usage:           "dead jobs: list, retry, purge",
		Description:     "Example: queuectl dlq retry --all",
		HideHelpCommand: true,
		Subcommands: []*cli.Command{{
			Name:        "list",
			Usage:       "list dead jobs",
			Description: "Example: queuectl dlq list --json",
			Flags:       []cli.Flag{jsonFlag},
			Action: withHome(func(c *cli.Context, h *home) error {
				if _, err := args(c, 0, 0); err != nil {
					return err
				}
				jobs, err := h.store.List(c.Context, claim.Filter{State: claim.Dead})
				if err != nil {
					return err
				}
				return printer(c).DeadJobs(jobs)
			}),
		}, {
			Name:        "retry",
			Usage:       "make dead jobs pending again, with attempts reset to 0",
			ArgsUsage:   "ID... | --all",
			Description: "Example: queuectl dlq retry nightly-db",
			Flags:       []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "retry every dead job"}},
			Action:      withHome(dlqRetry),
		}, {
			Name:        "purge",
			Usage:       "delete dead jobs, their runs and their dead/ files",
			ArgsUsage:   "ID...",
			Description: "Example: queuectl dlq purge nightly-db",
			Action:      withHome(dlqPurge),
		}},
	}
}

func dlqRetry(c *cli.Context, h *home) error {
	ids, err := args(c, 0, -1)
	if err != nil {
		return err
	}
	if c.Bool("all") == (len(ids) > 0) {
		return withHint(usagef("give job ids or --all"), "queuectl dlq retry ID...  or  queuectl dlq retry --all")
	}
	if c.Bool("all") {
		return retryAll(c, h)
	}
	return eachID(c, ids, func(id string) error {
		if _, err := h.store.Retry(c.Context, id); err != nil {
			return err
		}
		removeDead(c, h, id)
		fmt.Fprintf(c.App.Writer, "Retrying job %s\n", id)
		return nil
	})
}

// retryAll re-drives every dead job. One whose unique_key a live job holds
// stays dead; it is named on stderr and the exit code is 4 (conflict).
func retryAll(c *cli.Context, h *home) error {
	jobs, err := h.store.RetryAll(c.Context)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		removeDead(c, h, j.ID)
		fmt.Fprintf(c.App.Writer, "Retrying job %s\n", j.ID)
	}
	held, err := h.store.HeldDead(c.Context)
	if err != nil || len(held) == 0 {
		return err
	}
	var names []string
	for _, j := range held {
		names = append(names, fmt.Sprintf("%s (unique_key %q)", j.ID, j.UniqueKey))
	}
	return withHint(fmt.Errorf("%w: still dead: %s; a pending, processing or failed job holds that unique_key",
		claim.ErrConflict, strings.Join(names, ", ")), "retry once that job is done: queuectl dlq retry "+held[0].ID)
}

func dlqPurge(c *cli.Context, h *home) error {
	ids, err := args(c, 1, -1)
	if err != nil {
		return err
	}
	return eachID(c, ids, func(id string) error {
		if err := h.store.Purge(c.Context, id); err != nil {
			return err
		}
		removeFiles(c, h, id)
		fmt.Fprintf(c.App.Writer, "Purged job %s\n", id)
		return nil
	})
}

func removeDead(c *cli.Context, h *home, id string) {
	if err := spool.RemoveDead(h.dirs.Dead, id); err != nil {
		logf(c)("dead/%s.json: %v", id, err)
	}
}

// removeFiles removes a purged job's dead/ file and logs.
func removeFiles(c *cli.Context, h *home, id string) {
	removeDead(c, h, id)
	if err := run.RemoveLogs(h.logs, id); err != nil {
		logf(c)("%v", err)
	}
}

func purgeCommand() *cli.Command {
	return &cli.Command{
		Name:  "purge",
		Usage: "delete finished jobs with their runs, logs and dead/ files (retention)",
		Description: `Deletes the jobs in --state (completed or dead) that finished more than --older-than ago.

Example (crontab): 0 3 * * * queuectl purge --state completed --older-than 168h`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "state", Usage: "purge jobs in `STATE`: completed or dead"},
			&cli.DurationFlag{Name: "older-than", Usage: "that finished more than `D` ago, e.g. 168h"},
		},
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			age := c.Duration("older-than")
			if !c.IsSet("state") || !c.IsSet("older-than") || age < 0 {
				return withHint(usagef("give --state and a --older-than of 0 or more"), "queuectl purge --state completed --older-than 168h")
			}
			st, err := claim.ParseState(c.String("state"))
			if err != nil {
				return err
			}
			ids, err := h.store.PurgeFinished(c.Context, st, time.Now().Add(-age))
			if err != nil {
				return err
			}
			for _, id := range ids {
				removeFiles(c, h, id)
			}
			logf(c)("purged %d %s job(s) that finished more than %v ago", len(ids), st, age)
			return nil
		}),
	}
}

// eachID applies fn to every id, going on past failures. Each error is
// printed in turn, and the first decides the exit code.
func eachID(c *cli.Context, ids []string, fn func(string) error) error {
	code := exitOK
	for _, id := range ids {
		if err := fn(id); err != nil {
			if n := exitCode(err, c.App.ErrWriter); code == exitOK {
				code = n
			}
		}
	}
	if code == exitOK {
		return nil
	}
	return &exitStatus{code, nil}
}

func configCommand() *cli.Command {
	return &cli.Command{
		Name:            "config",
		Usage:           "read and change settings (stored in the database)",
		Description:     "Example: queuectl config set max-retries 5",
		HideHelpCommand: true,
		Subcommands: []*cli.Command{{
			Name:        "get",
			Usage:       "print one setting's value, or all settings",
			ArgsUsage:   "[KEY]",
			Description: "Example: queuectl config get max-retries",
			Flags:       []cli.Flag{jsonFlag},
			Action: withHome(func(c *cli.Context, h *home) error {
				a, err := args(c, 0, 1)
				if err != nil || len(a) == 0 {
					return firstErr(err, configList(c, h))
				}
				key, _, err := claim.LookupConfigKey(a[0])
				if err != nil {
					return err
				}
				vals, err := h.store.ConfigValues(c.Context)
				for _, v := range vals {
					if v.Key == key.Name {
						fmt.Fprintln(c.App.Writer, v.Value)
					}
				}
				return err
			}),
		}, {
			Name:        "set",
			Usage:       "change a setting",
			ArgsUsage:   "KEY VALUE",
			Description: "Example: queuectl config set max-backoff 10m",
			Action: withHome(func(c *cli.Context, h *home) error {
				a, err := args(c, 2, 2)
				if err != nil {
					return err
				}
				key, value, err := h.store.SetConfig(c.Context, a[0], a[1])
				if err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "%s = %s\n", key, value)
				return nil
			}),
		}, {
			Name:        "list",
			Usage:       "list every setting with its value and default",
			Description: "Example: queuectl config list --json",
			Flags:       []cli.Flag{jsonFlag},
			Action:      withHome(configList),
		}},
	}
}

func configList(c *cli.Context, h *home) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	vals, err := h.store.ConfigValues(c.Context)
	if err != nil {
		return err
	}
	return printer(c).Config(vals)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func watchCommand() *cli.Command {
	return &cli.Command{
		Name:        "watch",
		Usage:       "ingest the spool directory until interrupted, without running jobs",
		Description: "Example: queuectl watch",
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			err := newWatcher(c, h).Run(c.Context)
			if c.Context.Err() != nil {
				return nil
			}
			return err
		}),
	}
}

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:        "ingest",
		Usage:       "ingest the spool directory once and exit (for cron)",
		Description: "Example (crontab): * * * * * queuectl ingest",
		Flags:       []cli.Flag{jsonFlag},
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			if err := spool.CheckSpool(h.dirs.Spool); err != nil {
				return err
			}
			st, err := newWatcher(c, h).Pass(c.Context)
			if err != nil {
				return err
			}
			logf(c)("ingested %d, rejected %d, still being written %d", st.Ingested+st.Redriven, st.Rejected, st.Waiting)
			return nil
		}),
	}
}

func waitCommand() *cli.Command {
	return &cli.Command{
		Name:      "wait",
		Usage:     "block until jobs are completed or dead",
		ArgsUsage: "ID...",
		Description: `Exit 0 when all completed, 1 when any is dead, 124 on timeout.

Example: id=$(queuectl enqueue -q --command 'make test') && queuectl wait --timeout 10m "$id"`,
		Flags: []cli.Flag{&cli.DurationFlag{Name: "timeout", Usage: "give up after `D` (exit 124); 0 waits forever"}},
		Action: withHome(func(c *cli.Context, h *home) error {
			ids, err := args(c, 1, -1)
			if err != nil {
				return err
			}
			ctx := c.Context
			if d := c.Duration("timeout"); d > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, d)
				defer cancel()
			}
			jobs, err := h.store.Wait(ctx, ids, h.config.PollInterval)
			switch {
			case errors.Is(err, context.DeadlineExceeded):
				return &exitStatus{exitTimeout, fmt.Errorf("timed out after %v waiting for %s", c.Duration("timeout"), strings.Join(ids, " "))}
			case errors.Is(err, context.Canceled):
				return &exitStatus{exitInterrupted, nil}
			case err != nil:
				return err
			}
			var dead []string
			for _, j := range jobs {
				if j.State == claim.Dead {
					dead = append(dead, j.ID)
				}
			}
			if len(dead) > 0 {
				return withHint(&exitStatus{exitFailure, fmt.Errorf("dead: %s", strings.Join(dead, " "))}, "queuectl show "+dead[0])
			}
			return nil
		}),
	}
}

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:        "logs",
		Usage:       "print a run's stdout (or stderr)",
		ArgsUsage:   "ID",
		Description: "Example: queuectl logs -f --stderr nightly-db",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "attempt", Usage: "run number `N` (default: the latest)"},
			&cli.BoolFlag{Name: "stderr", Usage: "print stderr instead of stdout"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "follow a running job until it ends"},
		},
		Action: withHome(func(c *cli.Context, h *home) error {
			a, err := args(c, 1, 1)
			if err != nil {
				return err
			}
			r, err := pickRun(c, h, a[0])
			if err != nil {
				return err
			}
			path := r.StdoutPath
			if c.Bool("stderr") {
				path = r.StderrPath
			}
			if !c.Bool("follow") {
				return run.Copy(c.App.Writer, path)
			}
			return run.Follow(c.Context, c.App.Writer, path, 100*time.Millisecond, func() (bool, error) {
				runs, err := h.store.Runs(c.Context, r.JobID)
				return err != nil || !runs[r.Attempt-1].EndedAt.IsZero(), err
			})
		}),
	}
}

// pickRun finds the run --attempt names, or the job's latest.
func pickRun(c *cli.Context, h *home, id string) (claim.Run, error) {
	if _, err := h.store.Get(c.Context, id); err != nil {
		return claim.Run{}, err
	}
	runs, err := h.store.Runs(c.Context, id)
	if len(runs) == 0 && err == nil && c.Bool("follow") {
		runs, err = h.store.WaitStarted(c.Context, id, h.config.PollInterval)
	}
	if err != nil {
		return claim.Run{}, err
	}
	n := c.Int("attempt")
	switch {
	case len(runs) == 0:
		return claim.Run{}, withHint(fmt.Errorf("%w: job %s has not run yet", claim.ErrNotFound, id), "queuectl wait "+id)
	case n == 0:
		return runs[len(runs)-1], nil
	case n < 1 || n > len(runs):
		return claim.Run{}, usagef("job %s has runs 1 to %d, not %d", id, len(runs), n)
	}
	return runs[n-1], nil
}

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure throughput, ingestion, latency, scale and footprint against this machine's limits",
		Description: `Runs each scenario on scratch homes and holds it against a limit measured in the
same run (a bare loop doing the same work) or a fixed target. Takes a few minutes; --only picks
scenarios: throughput, ingest, latency, scale, footprint.

Example: queuectl bench --jobs 10000 --slots 4`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Value: 10000, Usage: "`N` jobs and spool files for throughput and ingestion"},
			&cli.IntFlag{Name: "slots", Value: 4, Usage: "`N` worker slots for throughput"},
			&cli.IntFlag{Name: "scale", Value: 1000000, Usage: "`N` queued jobs in the large store"},
			&cli.IntFlag{Name: "samples", Value: 200, Usage: "`N` latency samples per door"},
			&cli.StringSliceFlag{Name: "only", Usage: "run only scenario `S` (repeatable)"},
			&cli.StringFlag{Name: "dir", Usage: "keep the scratch homes, in a new directory in `DIR` (default: a temporary directory, removed)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			dir := c.String("dir")
			if dir == "" {
				if dir, err = os.MkdirTemp("", "queuectl-bench-"); err != nil {
					return err
				}
				defer os.RemoveAll(dir)
			}
			b := &run.Bench{Exe: exe, Dir: dir, Jobs: c.Int("jobs"), Slots: c.Int("slots"), Scale: c.Int("scale"),
				Samples: c.Int("samples"), Only: c.StringSlice("only"), Log: logf(c),
				SpoolDir: func(home string) string { return spool.DirsOf(home).Spool }}
			results, err := b.Run(c.Context)
			if len(results) == 0 && err != nil {
				return err
			}
			rows := make([]report.BenchRow, len(results))
			for i, r := range results {
				rows[i] = report.BenchRow(r)
			}
			return firstErr(printer(c).Bench(rows), err)
		},
	}
}

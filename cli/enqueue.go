package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/handoff"
	"github.com/urfave/cli/v2"
)

func enqueueCommand() *cli.Command {
	return &cli.Command{
		Name:      "enqueue",
		Usage:     "add a job to the queue",
		ArgsUsage: "[JSON | -]",
		Description: `Give the job as a JSON spec (argument, -f FILE, or - for stdin: one object,
or JSON lines for a batch stored in one transaction), or with --command and flags. The job
runs in its worker's directory and environment, with its cwd and env laid over them
(--cwd, --env), and under its worker's umask: it carries nothing of this shell's, as a spool
file has no shell to carry, and runs the same whoever enqueued it; run, which stands in for
running a command here, takes this directory, environment and umask.

Resource limits and finish hooks have no flag: give them in the spec ("limits": memory, cpu,
nofile, nproc, fsize; "on_success", "on_failure", "on_dead"), or for every job with
config set limit-memory 2G (and the other limit- and on- keys). man queuectl-spec has every field.

Example: queuectl enqueue --command 'pg_dump app > /backup/app.sql' --timeout 30m --unique-key nightly-db
Example: queuectl enqueue '{"command": "make -j8", "limits": {"memory": "2G", "cpu": "1h"}}'`,
		Flags: append(jobFlags(),
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the job spec from `FILE`"},
			&cli.StringFlag{Name: "command", Aliases: []string{"c"}, Usage: "shell `CMD` to run"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the job id"},
			jsonFlag,
		),
		Action: func(c *cli.Context) error {
			jobs, in, err := jobsToEnqueue(c)
			if err != nil {
				return err
			}
			if in != nil {
				defer in.Close()
				return enqueueStream(c, in)
			}
			if c.IsSet("after") {
				if err := withStore(func(c *cli.Context, h *home) error { return resolveAfter(c.Context, h.store, &jobs[0]) })(c); err != nil {
					return err
				}
			}
			return enqueueJobs(c, jobs)
		},
	}
}

// enqueueJobs stores jobs given whole: an argument, --command, or a stream
// that held one job.
func enqueueJobs(c *cli.Context, jobs []claim.NewJob) error {
	// One job goes to a running worker if there is one (handoff.go);
	// a batch, or a job the worker declines, goes to the store here.
	start := time.Now()
	var handed error
	if r, ok := resumed(c); ok && len(jobs) == 1 {
		jobs[0].ID, start, handed = r.ID, r.Start, handoff.ErrUnknown
	} else if len(jobs) == 1 {
		var r claim.Result
		if r, handed = handOff(c, &jobs[0]); handed == nil {
			return printEnqueued(c, nil, []claim.Result{r})
		}
	}
	return withStore(func(c *cli.Context, h *home) error {
		answered := saySlow(c, h)
		rs, err := h.store.EnqueueAll(c.Context, jobs)
		answered()
		if err != nil && errors.Is(handed, handoff.ErrUnknown) {
			rs, err = handedAfterAll(c, h, jobs[0], start, err)
		}
		if err != nil {
			return err
		}
		return printEnqueued(c, h, rs)
	})(c)
}

// printEnqueued prints rs; h is the store's home, or nil when the jobs
// were handed to a worker (a --json listing then opens it for reasons).
func printEnqueued(c *cli.Context, h *home, rs []claim.Result) error {
	for _, r := range rs {
		if r.Outcome == claim.Skipped && !c.Bool("json") {
			logf(c)("skipped: job %s with unique key %q is %s", r.Job.ID, r.Job.UniqueKey, r.Job.State)
		}
	}
	if c.Bool("json") && slices.ContainsFunc(rs, func(r claim.Result) bool { return r.Job.State == claim.Pending }) {
		// Why each pending job waits, as show says: a read of the queues
		// that a job handed to a worker has not made.
		reasons := func(c *cli.Context, h *home) error { pendingReasons(c, h, rs); return nil }
		if h != nil {
			reasons(c, h)
		} else if err := withStore(reasons)(c); err != nil {
			// The job is stored: its output goes on without the reasons.
			logf(c)("warning: why the pending jobs wait is left out: %v", err)
		}
	}
	return printer(c).Enqueued(rs, c.Bool("quiet"))
}

// pendingReasons sets the PendingReason of rs's pending jobs (withReasons).
func pendingReasons(c *cli.Context, h *home, rs []claim.Result) {
	jobs := make([]claim.Job, len(rs))
	for i := range rs {
		jobs[i] = rs[i].Job
	}
	jobs = withReasons(c, h.store, jobs)
	for i := range rs {
		rs[i].Job.PendingReason = jobs[i].PendingReason
	}
}

// jobsToEnqueue reads the job from exactly one of: argument, --command;
// or returns the input of -f or - (stdin), to read as a stream.
func jobsToEnqueue(c *cli.Context) ([]claim.NewJob, io.ReadCloser, error) {
	if err := commandTyped(c); err != nil {
		return nil, nil, err
	}
	a, err := args(c, 0, 1)
	if err != nil {
		return nil, nil, err
	}
	sources := len(a)
	for _, name := range []string{"file", "command"} {
		if c.IsSet(name) {
			sources++
		}
	}
	if sources != 1 {
		return nil, nil, withHint(usagef("give the job one way: a JSON argument, -f FILE, - (stdin) or --command"),
			`queuectl enqueue '{"command": "echo hi"}'  or  queuectl enqueue --command 'echo hi'`)
	}
	if !c.IsSet("command") {
		for _, f := range jobFlags() {
			if name := f.Names()[0]; c.IsSet(name) {
				return nil, nil, withHint(usagef("--%s goes with --command; a JSON spec carries its own fields", name),
					`queuectl enqueue '{"command": "echo hi", "priority": 3}'`)
			}
		}
	}
	switch {
	case c.IsSet("command"):
		nj, err := jobFromFlags(c, c.String("command"))
		return []claim.NewJob{nj}, nil, err
	case c.IsSet("file"):
		f, err := os.Open(c.String("file"))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", claim.ErrInvalid, err)
		}
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			f.Close()
			return nil, nil, withHint(fmt.Errorf("%w: %s is a directory: -f takes a file of job specs", claim.ErrInvalid, c.String("file")),
				"give one of its files: queuectl enqueue -f "+filepath.Join(c.String("file"), "job.json"))
		}
		return nil, f, nil
	case a[0] == "-":
		return nil, io.NopCloser(c.App.Reader), nil
	}
	nj, err := claim.ParseSpec([]byte(a[0]))
	return []claim.NewJob{nj}, nil, err
}

// commandTyped refuses a command typed where enqueue takes JSON
// (`queuectl enqueue echo hi`), with the two ways to say it.
func commandTyped(c *cli.Context) error {
	a := c.Args().Slice()
	if len(a) == 0 || c.IsSet("command") || c.IsSet("file") || a[0] == "-" {
		return nil
	}
	if jsonWord(a[0]) {
		return nil
	}
	if len(a) == 1 && specFile(a[0]) {
		return withHint(usagef("enqueue takes a job as JSON, not a file's name: %s", singleQuote(a[0])),
			"queuectl enqueue -f "+singleQuote(a[0]))
	}
	cmd := strings.Join(a, " ")
	run := "queuectl run -- " + cmd
	if len(a) == 1 {
		run = "queuectl run --shell " + singleQuote(cmd)
	}
	return withHint(usagef("enqueue takes a job as JSON, and %s is a command", singleQuote(cmd)),
		"queuectl enqueue --command "+singleQuote(cmd)+"  or, to run it and wait here: "+run)
}

// specFile reports whether name is a file of job specs, by its name
// (.json) or its first character ({): what enqueue -f takes.
func specFile(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".jsonl") {
		return true
	}
	head := make([]byte, 512)
	n, _ := f.Read(head)
	return bytes.HasPrefix(bytes.TrimSpace(head[:n]), []byte("{"))
}

// singleQuote quotes s for a shell as one word.
func singleQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// maxInput bounds what `schedule add -f` reads.
const maxInput = 64 << 20

// readInput reads a job spec, refusing input over maxInput whole.
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

// jobFlags are the flags that describe a job, shared by enqueue and run;
// jobFromFlags reads them.
func jobFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "id", Usage: "job `ID` (default: generated)"},
		&cli.IntFlag{Name: "max-retries", Usage: "`N` runs before the job is dead (default: config max-retries)"},
		&cli.IntFlag{Name: "backoff-base", Usage: "wait `N`^n seconds after the n-th failed run (default: config backoff-base)"},
		&cli.IntFlag{Name: "priority", Usage: "`N`: higher runs first"},
		&cli.StringFlag{Name: "run-at", Usage: "not before `TIME` (RFC 3339)"},
		&cli.StringFlag{Name: "delay", Usage: "not before `D` from now, e.g. 90s or 90 (seconds)"},
		&cli.StringFlag{Name: "timeout", Usage: "kill the job after `D`, e.g. 30m or 1800 (seconds) (default: config job-timeout)"},
		&cli.StringFlag{Name: "queue", Usage: "queue `NAME` (default: default)"},
		&cli.StringFlag{Name: "unique-key", Usage: "skip if a live job has this `KEY`"},
		&cli.StringSliceFlag{Name: "env", Usage: "set `K=V` in the job's environment (repeatable)"},
		&cli.StringFlag{Name: "cwd", Usage: "run in `DIR` (a relative DIR is taken from the current directory)"},
		&cli.StringSliceFlag{Name: "after", Usage: "wait until job `ID` completed (repeatable)"},
		&cli.StringFlag{Name: "label", Usage: "free-form `LABEL`, shown by list and show (list --label L)"},
	}
}

// resolveAfter names the jobs nj runs after by their ids: --after takes a
// unique prefix of an id or @last, as every job id argument does. A value
// that names no job is left as given, for the enqueue to report with the
// others (exit 2); an ambiguous prefix is an error here.
func resolveAfter(ctx context.Context, s *claim.Store, nj *claim.NewJob) error {
	for i, ref := range nj.After {
		id, err := s.Resolve(ctx, ref)
		switch {
		case err == nil:
			nj.After[i] = id
		case !errors.Is(err, claim.ErrNotFound):
			return err
		}
	}
	return nil
}

// absDir is the --cwd dir as the job keeps it: absolute, a relative one
// taken from the current directory (a job spec's cwd must be absolute:
// it runs where the worker is).
func absDir(dir string) string {
	if dir == "" || filepath.IsAbs(dir) {
		return dir
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir // refused as it is
}

// jobFromFlags makes the job of the job flags, to run command.
func jobFromFlags(c *cli.Context, command string) (claim.NewJob, error) {
	queue, err := queueOf(c) // --queue '' is no queue, not the default one
	if err != nil {
		return claim.NewJob{}, err
	}
	nj := claim.NewJob{Command: command, ID: c.String("id"), Priority: c.Int("priority"),
		Queue: queue, UniqueKey: c.String("unique-key"), Cwd: absDir(c.String("cwd")),
		After: c.StringSlice("after"), Label: c.String("label")}
	if c.IsSet("max-retries") {
		n := c.Int("max-retries")
		nj.MaxRetries = &n
	}
	if c.IsSet("backoff-base") {
		n := c.Int("backoff-base")
		nj.BackoffBase = &n
	}
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
	v := nj
	v.After = nil // may name jobs by prefix or @last: checked once resolveAfter made them ids
	return nj, v.Validate()
}

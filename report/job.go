package report

import (
	"io"
	"iter"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// JobObject is the one JSON shape of a job, in every command that prints
// jobs. Field names are documented in the package comment.
type JobObject struct {
	ID      string      `json:"id"`
	Command string      `json:"command"`
	State   claim.State `json:"state"`
	// PendingReason is why a pending job cannot run now (claim.Reason*).
	PendingReason string            `json:"pending_reason,omitempty"`
	Attempts      int               `json:"attempts"`
	MaxRetries    int               `json:"max_retries"`
	BackoffBase   int               `json:"backoff_base"`
	Priority      int               `json:"priority"`
	Queue         string            `json:"queue"`
	RunCount      int               `json:"run_count"`
	Lost          int               `json:"lost,omitempty"`
	RunAt         string            `json:"run_at,omitempty"`
	RunAfter      string            `json:"run_after,omitempty"`
	NextRetryAt   string            `json:"next_retry_at,omitempty"`
	Timeout       string            `json:"timeout,omitempty"`
	EnvNames      []string          `json:"env_names,omitempty"`
	Env           map[string]string `json:"env,omitempty"` // only when asked: Printer.Env
	Cwd           string            `json:"cwd,omitempty"`
	Umask         string            `json:"umask,omitempty"` // "0077": the umask its shell runs with (run's caller's)
	UniqueKey     string            `json:"unique_key,omitempty"`
	Label         string            `json:"label,omitempty"`
	Worker        string            `json:"worker,omitempty"`
	LeaseUntil    string            `json:"lease_until,omitempty"`
	LastError     string            `json:"last_error,omitempty"`
	ExitCode      *int              `json:"exit_code,omitempty"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
	FinishedAt    string            `json:"finished_at,omitempty"`
	WaitingOn     []string          `json:"waiting_on,omitempty"`
	// After is every job this one was enqueued to run after, met or not.
	After []string `json:"after,omitempty"`
	// DeadBy is the dependency whose end made the job dead.
	DeadBy    string        `json:"dead_by,omitempty"`
	OnSuccess string        `json:"on_success,omitempty"`
	OnFailure string        `json:"on_failure,omitempty"`
	OnDead    string        `json:"on_dead,omitempty"`
	Limits    *claim.Limits `json:"limits,omitempty"`
	CancelAt  string        `json:"cancel_requested_at,omitempty"`
}

// JobJSON returns the JSON shape of j. It depends on j alone (no clock),
// so the same job always prints the same object.
func JobJSON(j claim.Job) JobObject {
	o := JobObject{
		ID: j.ID, Command: j.Command, State: j.State, PendingReason: j.PendingReason, Attempts: j.Attempts,
		MaxRetries: j.MaxRetries, BackoffBase: j.BackoffBase, Priority: j.Priority,
		Queue: j.Queue, RunCount: j.Runs, Lost: j.Lost, RunAt: stamp(j.RunAt), Timeout: timeout(j.Timeout),
		EnvNames: envNames(j.Env), Cwd: j.Cwd, Umask: claim.UmaskText(j.Umask), UniqueKey: j.UniqueKey, Label: j.Label, Worker: j.WorkerID,
		LeaseUntil: stamp(j.LeaseUntil), LastError: j.LastError, ExitCode: j.ExitCode,
		CreatedAt: stamp(j.CreatedAt), UpdatedAt: stamp(j.UpdatedAt), FinishedAt: stamp(j.FinishedAt),
		CancelAt: stamp(j.CancelAt),
	}
	if waiting(j) {
		o.RunAfter = stamp(j.RunAfter)
	}
	if j.State == claim.Failed {
		o.NextRetryAt = o.RunAfter // the name a reader of a failed job looks for
	}
	o.WaitingOn = j.WaitingOn
	o.After = j.After
	o.DeadBy = j.DeadBy
	o.OnSuccess, o.OnFailure, o.OnDead = j.Hooks.OnSuccess, j.Hooks.OnFailure, j.Hooks.OnDead
	if !j.Limits.IsZero() {
		l := j.Limits // not &j.Limits, which would put every j on the heap
		o.Limits = &l
	}
	return o
}

// waiting reports whether j's run_after still matters: once a job is
// claimed or finished, it is history that would only mislead.
func waiting(j claim.Job) bool {
	return j.State == claim.Pending || j.State == claim.Failed
}

// Jobs renders the job list: a table with the id first, the state second
// and the command last; or one JSON array, `[]` when there are none.
func (p Printer) Jobs(jobs []claim.Job) error {
	return p.JobStream(func(yield func(claim.Job, error) bool) {
		for _, j := range jobs {
			if !yield(j, nil) {
				return
			}
		}
	})
}

// JobStream renders jobs as they come from seq, as Jobs renders a slice:
// a list of a million jobs starts at once and stays small. Table rows are
// laid out in blocks of streamBlock, each sized on its own rows, the
// header before the first. The rows are read in a goroutine of its own
// and the blocks laid out in up to GOMAXPROCS (JSON: in one), so reading
// and rendering share the CPUs; JobStream returns once all of them have
// ended. An error from seq ends the output where it stands (a table's
// unfinished block is not shown) and is returned; so is a write error,
// which stops the reading of seq.
func (p Printer) JobStream(seq iter.Seq2[claim.Job, error]) error {
	if p.JSON {
		return p.jobStreamJSON(seq)
	}
	pl := pipeline[claim.Job]{size: streamBlock, workers: runtime.GOMAXPROCS(0), render: p.tableBlock}
	_, err := pl.run(p.Out, seq)
	return err
}

// jobHeader heads the job list's table.
// REASON is why a pending job cannot run now, or when a failed one
// retries; RUNNING FOR how long a
// processing job has run (since its claim, its last change).
var jobHeader = []string{"ID", "STATE", "REASON", "ATTEMPTS", "QUEUE", "PRIORITY", "LABEL", "UPDATED", "RUNNING FOR", "COMMAND"}

// tableBlock lays out one block of the job list's table, the header
// before the first.
func (p Printer) tableBlock(b *batch[claim.Job]) {
	if b.err != nil {
		return // cut short by the store: a block is shown whole or not at all
	}
	rows := make([][]string, len(b.jobs))
	for i, j := range b.jobs {
		rows[i] = []string{j.ID, p.state(string(j.State)), p.reason(j), Attempts(j), j.Queue,
			strconv.Itoa(j.Priority), orNone(j.Label), p.age(j.UpdatedAt), p.runningFor(j), command(j.Command)}
	}
	var header []string
	if b.n == 0 {
		header = jobHeader
	}
	b.out, b.err = appendRows(b.out, header, rows)
}

// reason is job j's REASON cell: why it waits when pending; when it
// retries when failed ("retry in 28s", an age as the table's others), or
// that its retry is due, and what keeps it from running all the same
// ("retry due, paused": its queue). "-" otherwise. Only the table says the
// retry: JSON carries next_retry_at, and pending_reason is for pending jobs.
func (p Printer) reason(j claim.Job) string {
	if j.State != claim.Failed {
		return orNone(j.PendingReason)
	}
	if d := j.RunAfter.Sub(p.now()); d >= time.Second {
		return "retry in " + coarse(d)
	}
	if j.HeldBack != "" {
		return "retry due, " + j.HeldBack
	}
	return "retry due"
}

// runningFor is how long processing job j has run: since its claim, the
// last change to a processing job. "-" for a job that is not running.
func (p Printer) runningFor(j claim.Job) string {
	if j.State != claim.Processing {
		return none
	}
	return coarse(max(p.now().Sub(j.UpdatedAt), 0))
}

// jsonBatch is how many jobs a JSON list (streamJSON) hands over at a
// time: enough that a hand-over costs nothing next to the rows, few
// enough that the first ones show at once.
const jsonBatch = 256

// jobStreamJSON writes the array WriteJSON would write for the whole list,
// byte for byte, a batch of objects at a time.
func (p Printer) jobStreamJSON(seq iter.Seq2[claim.Job, error]) error {
	return streamJSON(p.Out, seq, jsonObjects)
}

// streamJSON writes seq as one JSON array, `[]` when empty, a batch of
// members at a time; render appends a batch's members, the array's
// opening bracket before the first.
func streamJSON[T any](w io.Writer, seq iter.Seq2[T, error], render func(*batch[T])) error {
	// Reading the rows is most of the CPU here, so the reader gets slack:
	// it reads on while a batch waits for the pipe (reader blocked 0.5 s
	// of a million rows without, 0.2-0.35 s with). Tables have none:
	// each block held is memory. Their workers were the bottleneck while
	// tablewriter laid the blocks out; since appendRows they wait on the
	// reader as JSON's does, and one worker with slack measured the same
	// (200,000 jobs, 2 CPUs), so the tables' pipeline stayed as it was.
	pl := pipeline[T]{size: jsonBatch, workers: 1, slack: 1, render: render}
	n, err := pl.run(w, seq)
	if err != nil {
		return err
	}
	end := "\n]\n"
	if n == 0 {
		end = "[]\n"
	}
	_, err = io.WriteString(w, end)
	return err
}

// jsonObjects appends b's jobs as members of the list's array, the
// array's opening bracket before the first.
func jsonObjects(b *batch[claim.Job]) {
	for i, j := range b.jobs {
		mark := len(b.out)
		if b.n == 0 && i == 0 {
			b.out = append(b.out, "[\n  "...)
		} else {
			b.out = append(b.out, ",\n  "...)
		}
		o := JobJSON(j)
		var err error
		if b.out, err = appendJobObject(b.out, &o); err != nil {
			b.out = b.out[:mark]
			if b.err == nil { // the store's error, which cut the batch, comes first
				b.err = err
			}
			return
		}
	}
}

// JobsJSON is the JSON shape of a job list (list, dlq list). It is never
// nil, so an empty list encodes as [] and not null.
func JobsJSON(jobs []claim.Job) []JobObject {
	out := make([]JobObject, len(jobs))
	for i, j := range jobs {
		out[i] = JobJSON(j)
	}
	return out
}

// Attempts reads "1/3": runs used of runs allowed.
func Attempts(j claim.Job) string {
	return strconv.Itoa(j.Attempts) + "/" + strconv.Itoa(j.MaxRetries)
}

// command fits a command in the last column: one line, about 60 cells.
func command(s string) string {
	return clip(oneLine(s), 60)
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// envNames returns the names of env, sorted: what every view shows of a
// job's environment, whose values are secrets.
func envNames(env map[string]string) []string {
	if len(env) == 0 {
		return nil
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

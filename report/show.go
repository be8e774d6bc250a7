package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/queuectl/queuectl/claim"
)

// RunObject is the JSON shape of one run of a job (see the package comment).
type RunObject struct {
	Attempt    int    `json:"attempt"`
	Worker     string `json:"worker"`
	Host       string `json:"host"`
	PID        int    `json:"pid"`
	Outcome    string `json:"outcome,omitempty"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	Error      string `json:"error,omitempty"`
	StartedAt  string `json:"started_at"`
	EndedAt    string `json:"ended_at,omitempty"`
	DurationMS *int64 `json:"duration_ms,omitempty"`
	Stdout     string `json:"stdout,omitempty"`
	Stderr     string `json:"stderr,omitempty"`
	// Hooks: how each finish hook after the run ended; Limits: what held
	// the run (cgroup, for one without limits; rlimit, cgroup+rlimit).
	Hooks  []string `json:"hooks,omitempty"`
	Limits string   `json:"limits,omitempty"`
	// What the store kept of each stream once the run ended (SPEC §9):
	// how many bytes it wrote, and whether the tail kept is only its last
	// 64 KiB; in show, for a stream whose log file cannot be read here,
	// the tail's text and the full file as host:path.
	StdoutSize      *int64  `json:"stdout_size,omitempty"`
	StdoutTruncated *bool   `json:"stdout_truncated,omitempty"`
	StdoutTail      *string `json:"stdout_tail,omitempty"`
	StdoutFile      string  `json:"stdout_file,omitempty"`
	StderrSize      *int64  `json:"stderr_size,omitempty"`
	StderrTruncated *bool   `json:"stderr_truncated,omitempty"`
	StderrTail      *string `json:"stderr_tail,omitempty"`
	StderrFile      string  `json:"stderr_file,omitempty"`
}

// runJSON returns the JSON shape of r, with the sizes of what the store
// kept of its streams, and their text for the streams p.FromTail names.
func (p Printer) runJSON(r claim.Run) RunObject {
	o := RunObject{
		Attempt: r.Attempt, Worker: r.WorkerID, Host: r.Host, PID: r.PID,
		Outcome: r.Outcome, ExitCode: r.ExitCode, Error: r.Error,
		StartedAt: stamp(r.StartedAt), EndedAt: stamp(r.EndedAt),
		Stdout: r.StdoutPath, Stderr: r.StderrPath, Limits: r.Confined,
	}
	// An ended run's stream that printed nothing has no file to name.
	if p.Printed != nil && !r.EndedAt.IsZero() {
		if !p.Printed(r, false) {
			o.Stdout = ""
		}
		if !p.Printed(r, true) {
			o.Stderr = ""
		}
	}
	if r.Hooks != "" {
		o.Hooks = strings.Split(r.Hooks, "\n")
	}
	if !r.EndedAt.IsZero() {
		ms := r.EndedAt.Sub(r.StartedAt).Milliseconds()
		o.DurationMS = &ms
	}
	p.tailFields(&o, r)
	return o
}

// ShownJob is `show --json`: the job object with its runs beside it.
type ShownJob struct {
	JobObject
	Runs []RunObject `json:"runs"`
}

// ShowJSON returns the JSON shape of `show`: j with its runs, first run
// first ("runs" is [] before the first).
func ShowJSON(j claim.Job, runs []claim.Run) ShownJob { return Printer{}.ShowJSON(j, runs) }

// ShowJSON is the package's ShowJSON with the tails' text of the streams
// p.FromTail names.
func (p Printer) ShowJSON(j claim.Job, runs []claim.Run) ShownJob {
	o := JobJSON(j)
	if p.Env {
		o.Env = j.Env
	}
	return ShownJob{JobObject: o, Runs: p.RunsJSON(runs)}
}

// RunsJSON is the JSON shape of a job's runs, with the tails' text of the
// streams p.FromTail names; never nil.
func (p Printer) RunsJSON(runs []claim.Run) []RunObject {
	out := make([]RunObject, len(runs))
	for i, r := range runs {
		out[i] = p.runJSON(r)
	}
	return out
}

// Job renders `show`: every field of j that is set as `key: value` lines
// (keys as in JSON), then a table of its runs. JSON: the job object plus
// "runs", the array of run objects.
func (p Printer) Job(j claim.Job, runs []claim.Run) error {
	if p.JSON {
		return WriteJSON(p.Out, p.ShowJSON(j, runs))
	}
	var b strings.Builder
	for _, f := range p.jobFields(j) {
		if f.value != "" {
			fmt.Fprintf(&b, "%s: %s\n", f.key, f.value)
		}
	}
	if _, err := io.WriteString(p.Out, b.String()); err != nil {
		return err
	}
	if len(runs) == 0 {
		return nil
	}
	if _, err := io.WriteString(p.Out, "\n"); err != nil {
		return err
	}
	if err := p.runs(runs); err != nil {
		return err
	}
	// What did not fit the table: how limits were set, how hooks ended.
	b.Reset()
	for _, r := range runs {
		if r.Confined != "" {
			fmt.Fprintf(&b, "run %d limits: %s\n", r.Attempt, r.Confined)
		}
		for _, h := range strings.Split(r.Hooks, "\n") {
			if h != "" {
				fmt.Fprintf(&b, "run %d hook: %s\n", r.Attempt, oneLine(h))
			}
		}
	}
	if b.Len() > 0 {
		if _, err := io.WriteString(p.Out, "\n"+b.String()); err != nil {
			return err
		}
	}
	// The latest run's output, where its files cannot be read here.
	b.Reset()
	p.keptTails(&b, runs)
	_, err := io.WriteString(p.Out, b.String())
	return err
}

type field struct{ key, value string }

// jobFields lists j's fields in JSON order; an empty value means unset.
// Free text is made one line so each field stays one line for grep.
func (p Printer) jobFields(j claim.Job) []field {
	return []field{
		{"id", j.ID},
		{"command", oneLine(j.Command)},
		{"state", p.state(string(j.State))},
		{"pending_reason", j.PendingReason},
		{"running_for", strings.TrimPrefix(p.runningFor(j), none)},
		{"attempts", strconv.Itoa(j.Attempts)},
		{"max_retries", strconv.Itoa(j.MaxRetries)},
		{"backoff_base", strconv.Itoa(j.BackoffBase)},
		{"priority", strconv.Itoa(j.Priority)},
		{"queue", j.Queue},
		{"run_count", strconv.Itoa(j.Runs)},
		{"lost", count(j.Lost)},
		{"run_at", p.when(j.RunAt)},
		{"run_after", p.runAfter(j)},
		{"timeout", timeout(j.Timeout)},
		{"env_names", strings.Join(envNames(j.Env), " ")},
		{"env", p.env(j.Env)},
		{"cwd", oneLine(j.Cwd)},
		{"umask", claim.UmaskText(j.Umask)},
		{"unique_key", oneLine(j.UniqueKey)},
		{"label", oneLine(j.Label)},
		{"worker", j.WorkerID},
		{"lease_until", p.when(j.LeaseUntil)},
		{"last_error", oneLine(j.LastError)},
		{"exit_code", exitCode(j.ExitCode)},
		{"created_at", p.when(j.CreatedAt)},
		{"updated_at", p.when(j.UpdatedAt)},
		{"finished_at", p.when(j.FinishedAt)},
		{"waiting_on", strings.Join(j.WaitingOn, " ")},
		{"after", strings.Join(j.After, " ")},
		{"dead_by", j.DeadBy},
		{"on_success", oneLine(j.Hooks.OnSuccess)},
		{"on_failure", oneLine(j.Hooks.OnFailure)},
		{"on_dead", oneLine(j.Hooks.OnDead)},
		{"limits", j.Limits.String()},
		{"cancel_requested_at", p.when(j.CancelAt)},
	}
}

// The helpers below return "" for an unset field, which jobFields leaves out.

func count(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func (p Printer) runAfter(j claim.Job) string {
	if !waiting(j) {
		return ""
	}
	return p.when(j.RunAfter)
}

func timeout(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

func exitCode(code *int) string {
	if code == nil {
		return ""
	}
	return strconv.Itoa(*code)
}

// env reads "K=V K2=V2", sorted; a value that would not survive the
// shell's word splitting is quoted.
func (p Printer) env(m map[string]string) string {
	if !p.Env {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := m[k]
		if v == "" || strings.IndexFunc(v, unsafeInWord) >= 0 {
			v = strconv.Quote(v)
		}
		parts[i] = k + "=" + v
	}
	return strings.Join(parts, " ")
}

func unsafeInWord(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("\"'\\$`", r)
}

// runs renders the run table of `show`: one row per attempt, log paths last
// because they are long and the eye wants the outcome first.
func (p Printer) runs(runs []claim.Run) error {
	rows := make([][]string, len(runs))
	for i, r := range runs {
		outcome := r.Outcome
		if outcome == "" {
			outcome = "running"
		}
		rows[i] = []string{strconv.Itoa(r.Attempt), orNone(r.WorkerID), orNone(exitCode(r.ExitCode)),
			p.state(outcome), p.age(r.StartedAt), p.age(r.EndedAt), p.runDuration(r),
			p.logFile(r, false), p.logFile(r, true)}
	}
	return writeTable(p.Out, []string{"ATTEMPT", "WORKER", "EXIT", "OUTCOME", "STARTED", "ENDED", "DURATION", "STDOUT", "STDERR"}, rows)
}

// logFile names a stream's log file in show's run table: "(no output)"
// when the stream printed nothing, and so has no file ("(no output yet)"
// while the run runs); a file of this host that is gone is said to be.
func (p Printer) logFile(r claim.Run, stderr bool) string {
	path := r.StdoutPath
	if stderr {
		path = r.StderrPath
	}
	if p.Printed != nil && !p.Printed(r, stderr) {
		if r.EndedAt.IsZero() {
			return "(no output yet)"
		}
		return noOutput
	}
	if path != "" && r.Host == p.Host && p.FromTail != nil && p.FromTail(r, stderr) {
		return path + " (gone)" // removed by hand: what was kept with the run is shown instead
	}
	return orNone(p.logPath(r, path))
}

// noOutput stands for the log file of a stream that printed nothing.
const noOutput = "(no output)"

// Field is one `key: value` line of `show`; Value is never empty.
type Field struct{ Key, Value string }

// JobFields returns the fields `show` prints for j, in its order and words,
// leaving out the unset ones: what the dashboard's job page lists.
func (p Printer) JobFields(j claim.Job) []Field {
	var out []Field
	for _, f := range p.jobFields(j) {
		if f.value != "" {
			out = append(out, Field{f.key, f.value})
		}
	}
	return out
}

// LoggedRun is a run of `logs --json`: the run object and the text of
// both its streams, as logs reads them (the log file here, else the tail
// kept with the run); "" for a stream that printed nothing.
type LoggedRun struct {
	RunObject
	StdoutText string `json:"stdout_text"`
	StderrText string `json:"stderr_text"`
}

// Logs renders `logs --json`: one array of runs with their streams, first
// run first.
func (p Printer) Logs(runs []claim.Run, stdout, stderr []string) error {
	return WriteJSON(p.Out, p.LoggedRuns(runs, stdout, stderr))
}

// LoggedRuns is the array Logs renders.
func (p Printer) LoggedRuns(runs []claim.Run, stdout, stderr []string) []LoggedRun {
	out := make([]LoggedRun, len(runs))
	for i, r := range runs {
		out[i] = LoggedRun{RunObject: p.runJSON(r), StdoutText: stdout[i], StderrText: stderr[i]}
	}
	return out
}

// RearmedObject is the JSON shape of claim.Rearmed: what a re-drive (dlq
// retry, restart) did to the jobs that died with the job re-driven.
type RearmedObject struct {
	// Waiting came back: pending, waiting for it again.
	Waiting []string `json:"waiting,omitempty"`
	// Left stay dead: a live job holds their unique_key.
	Left []string `json:"left,omitempty"`
	// Rewaiting had not started and wait for its new run.
	Rewaiting []string `json:"rewaiting,omitempty"`
}

// RearmedJSON returns the JSON shape of r, nil when it names no job.
func RearmedJSON(r claim.Rearmed) *RearmedObject {
	if len(r.Waiting)+len(r.Left)+len(r.Rewaiting) == 0 {
		return nil
	}
	return &RearmedObject{Waiting: r.Waiting, Left: r.Left, Rewaiting: r.Rewaiting}
}

// DiedJSON is the JSON shape of the jobs that died with a job canceled,
// those `cancel` names on stderr: their ids, in the order it names them;
// nil when none did.
func DiedJSON(died []claim.Job) []string {
	if len(died) == 0 {
		return nil
	}
	ids := make([]string, len(died))
	for i, j := range died {
		ids[i] = j.ID
	}
	return ids
}

// LastStderr ends show of a failed job with the last lines of the stderr
// of its run attempt, indented, and where all of it is.
func (p Printer) LastStderr(id string, attempt int, lines []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nstderr of run %d, its last lines (all of it: queuectl logs %s --stderr):\n", attempt, id)
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	_, err := io.WriteString(p.Out, b.String())
	return err
}

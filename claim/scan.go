package claim

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
)

// Scanner is a row an engine reads: *sql.Row, *sql.Rows and pgx.Row all
// have this method.
type Scanner interface{ Scan(dest ...any) error }

// ScanJob reads a job from a row of the jobs columns, in the order both
// engines select them, so that the two engines decode a job one way.
func ScanJob(row Scanner) (Job, error) {
	var s JobScanner
	return s.Scan(row)
}

// ScanJobAfter reads a job as ScanJob does from a row with one more column
// after the jobs columns: the ids the job runs after, separated by spaces,
// or NULL when it runs after none. It fills Job.After.
func ScanJobAfter(row Scanner) (Job, error) {
	var after any
	j, err := ScanJob(withAfter{row, &after})
	if err != nil {
		return j, err
	}
	switch ids := after.(type) {
	case string:
		j.After = strings.Fields(ids)
	case []byte:
		j.After = strings.Fields(string(ids))
	}
	slices.Sort(j.After)
	return j, nil
}

// withAfter is a row whose last column goes to after.
type withAfter struct {
	row   Scanner
	after *any
}

func (w withAfter) Scan(dest ...any) error { return w.row.Scan(append(dest, w.after)...) }

// JobScanner reads jobs as ScanJob does, from row after row, into
// destinations it keeps: the driver is handed the same pointers for every
// row, so a listing of a million jobs does not allocate a set of them a
// row. Each column is scanned into an any, which database/sql fills as it
// comes from the driver, without the conversions it makes for typed
// destinations (an integer into an int goes through a string): the types
// are checked here. Not safe for concurrent use; the zero value is ready.
type JobScanner struct {
	vals [jobColumnCount]any
	dest []any
}

// jobColumnCount is how many columns a row of jobs has.
const jobColumnCount = 32

// Scan reads the job in row.
func (s *JobScanner) Scan(row Scanner) (Job, error) {
	if s.dest == nil {
		s.dest = make([]any, len(s.vals))
		for i := range s.vals {
			s.dest[i] = &s.vals[i]
		}
	}
	if err := row.Scan(s.dest...); err != nil {
		return Job{}, err
	}
	c := columns{vals: s.vals[:]}
	j := Job{Seq: c.int64(0), ID: c.str(1), Command: c.str(2), State: State(c.str(3)), Queue: c.str(4),
		Priority: c.int(5), Attempts: c.int(6), MaxRetries: c.int(7), BackoffBase: c.int(8), Runs: c.int(9),
		Lost: c.int(10), Timeout: time.Duration(c.int64(11)), Cwd: c.str(13), UniqueKey: c.str(14),
		RunAt: c.time(15), RunAfter: time.Unix(0, c.int64(16)).UTC(), WorkerID: c.str(17), LeaseUntil: c.time(18),
		LastError: c.str(19), CreatedAt: time.Unix(0, c.int64(21)).UTC(), UpdatedAt: time.Unix(0, c.int64(22)).UTC(),
		FinishedAt: c.time(23), Waiting: c.int(24), DeadBy: c.str(25), CancelAt: c.time(28), Label: c.str(29)}
	if code, ok := c.nullInt64(20); ok {
		n := int(code)
		j.ExitCode = &n
	}
	if mask, ok := c.nullInt64(30); ok {
		n := int(mask)
		j.Umask = &n
	}
	if c.err != nil {
		return Job{}, fmt.Errorf("job %s: %w", j.ID, c.err)
	}
	// A dead or canceled job waits for nothing, though its count of unmet
	// dependencies stays for a re-drive to wait on: DeadBy says what
	// killed it.
	if waitingOn := c.str(31); waitingOn != "" && j.State != Dead && j.State != Canceled {
		j.WaitingOn = strings.Fields(waitingOn)
		slices.Sort(j.WaitingOn)
	}
	if err := unmarshalColumn(c.vals[26], &j.Hooks); err != nil {
		return Job{}, fmt.Errorf("job %s: hooks: %w", j.ID, err)
	}
	if err := unmarshalColumn(c.vals[27], &j.Limits); err != nil {
		return Job{}, fmt.Errorf("job %s: limits: %w", j.ID, err)
	}
	if err := unmarshalColumn(c.vals[12], &j.Env); err != nil {
		return Job{}, fmt.Errorf("job %s: env: %w", j.ID, err)
	}
	j.Env = jobs.UnescapeEnv(j.Env) // names and values that are not UTF-8
	return j, nil
}

// unmarshalColumn decodes a JSON text column into v; NULL leaves v as it is.
func unmarshalColumn(col any, v any) error {
	switch text := col.(type) {
	case nil:
		return nil
	case string:
		return json.Unmarshal([]byte(text), v)
	case []byte:
		return json.Unmarshal(text, v)
	}
	return fmt.Errorf("a %T where JSON text belongs", col)
}

// columns reads the values of a row as the drivers give them: SQLite
// integers as int64, PostgreSQL's as int64 or int32, text as string, NULL
// as nil. The first value of another type is kept in err.
type columns struct {
	vals []any
	err  error
}

func (c *columns) str(i int) string {
	switch v := c.vals[i].(type) {
	case string:
		return v
	case nil:
		return ""
	case []byte:
		return string(v)
	}
	c.fail(i)
	return ""
}

func (c *columns) nullInt64(i int) (int64, bool) {
	switch v := c.vals[i].(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case nil:
		return 0, false
	}
	c.fail(i)
	return 0, false
}

func (c *columns) int64(i int) int64 {
	n, _ := c.nullInt64(i)
	return n
}

func (c *columns) int(i int) int { return int(c.int64(i)) }

// time is a nullable unix-nanosecond column as a UTC time.
func (c *columns) time(i int) time.Time {
	if n, ok := c.nullInt64(i); ok {
		return time.Unix(0, n).UTC()
	}
	return time.Time{}
}

func (c *columns) fail(i int) {
	if c.err == nil {
		c.err = fmt.Errorf("column %d: unexpected %T", i, c.vals[i])
	}
}

// FromNanos is a nullable unix-nanosecond column as a UTC time, zero when
// it is NULL.
func FromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// Nanos is t as a nullable unix-nanosecond column: NULL when t is zero.
func Nanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

// NullString is s as a nullable text column: NULL when s is empty.
func NullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// ScanRun reads a run from a row of an engine's run columns, in the order
// both engines select them, then into more (a joined column, the tails'
// bytes). Its Tails carry the sizes; SetTailData adds the bytes.
func ScanRun(row Scanner, more ...any) (Run, error) {
	var r Run
	var pgid, execAt, ended, exitCode, stdoutSize, stderrSize sql.NullInt64
	var started int64
	var outcome, errText, stdout, stderr, hooks, confined sql.NullString
	err := row.Scan(append([]any{&r.JobID, &r.Attempt, &r.WorkerID, &r.Host, &r.PID, &pgid, &started,
		&execAt, &ended, &outcome, &exitCode, &errText, &stdout, &stderr, &hooks, &confined,
		&stdoutSize, &stderrSize}, more...)...)
	if err != nil {
		return Run{}, err
	}
	r.Tails = scanTails(stdoutSize, stderrSize)
	r.Hooks, r.Confined = hooks.String, confined.String
	r.PGID = int(pgid.Int64)
	r.StartedAt, r.ExecAt, r.EndedAt = time.Unix(0, started).UTC(), FromNanos(execAt), FromNanos(ended)
	r.Outcome, r.Error, r.StdoutPath, r.StderrPath = outcome.String, errText.String, stdout.String, stderr.String
	if exitCode.Valid {
		code := int(exitCode.Int64)
		r.ExitCode = &code
	}
	return r, nil
}

// scanTails makes a run's Tails from its size columns: nil when they are
// NULL (nothing was kept). The bytes are the caller's to add (SetTailData).
func scanTails(stdoutSize, stderrSize sql.NullInt64) *Tails {
	if !stdoutSize.Valid || !stderrSize.Valid {
		return nil
	}
	return &Tails{Stdout: Tail{Size: stdoutSize.Int64}, Stderr: Tail{Size: stderrSize.Int64}}
}

// SetTailData puts the bytes of a run's tail columns into r.Tails; a run
// without tails keeps none.
func SetTailData(r *Run, stdout, stderr []byte) {
	if r.Tails != nil {
		r.Tails.Stdout.Data, r.Tails.Stderr.Data = stdout, stderr
	}
}

// ScanSchedule reads a schedule from a row of both engines' schedule
// columns (s.name … s.updated_at, the last job's state, then s.last_skipped,
// s.skip_reason, s.due_checked).
func ScanSchedule(row Scanner) (Schedule, error) {
	var sc Schedule
	var lastJob, lastState, skipReason sql.NullString
	var lastDue, lastSkipped sql.NullInt64
	var next, created, updated int64
	err := row.Scan(&sc.Name, &sc.Cron, &sc.TZ, &sc.Spec, &sc.Paused, &sc.File, &next, &lastJob,
		&lastDue, &created, &updated, &lastState, &lastSkipped, &skipReason, &sc.DueChecked)
	if err != nil {
		return Schedule{}, err
	}
	sc.NextDue, sc.LastDue = time.Unix(0, next).UTC(), FromNanos(lastDue)
	sc.CreatedAt, sc.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	sc.LastJob, sc.LastState = lastJob.String, State(lastState.String)
	sc.LastSkipped, sc.SkipReason = FromNanos(lastSkipped), skipReason.String
	return sc, nil
}

// ScanWorker reads a worker from a row of both engines' worker columns
// (id, host, pid, slots, queues, started_at, heartbeat_at, stopping,
// lease_ns, heartbeat_ns).
func ScanWorker(row Scanner) (WorkerInfo, error) {
	var w WorkerInfo
	var queues string
	var started, beat, lease, every, pidStart, silent int64
	if err := row.Scan(&w.ID, &w.Host, &w.PID, &w.Slots, &queues, &started, &beat, &w.Stopping, &lease, &every, &pidStart,
		&w.SlotsApplied, &silent); err != nil {
		return WorkerInfo{}, err
	}
	w.PIDStart = uint64(pidStart)
	w.Lease, w.HeartbeatInterval = time.Duration(lease), time.Duration(every)
	if queues != "" {
		w.Queues = strings.Split(queues, ",")
	}
	w.StartedAt, w.HeartbeatAt = time.Unix(0, started).UTC(), time.Unix(0, beat).UTC()
	if silent != 0 {
		w.SilentSince = time.Unix(0, silent).UTC()
	}
	return w, nil
}

package claim

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
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

// JobScanner reads jobs as ScanJob does, from row after row, into
// destinations it keeps: the driver is handed the same pointers for every
// row, so a listing of a million jobs does not allocate some twenty
// variables a row. Not safe for concurrent use; the zero value is ready.
type JobScanner struct {
	j                                        Job
	state                                    string
	timeout, runAfter, created, updated      int64
	env, cwd, uniqueKey, workerID, lastError sql.NullString
	deadBy, hooks, limits, waitingOn         sql.NullString
	runAt, lease, finished, cancelAt         sql.NullInt64
	exitCode                                 sql.NullInt64
	dest                                     []any
}

// Scan reads the job in row.
func (s *JobScanner) Scan(row Scanner) (Job, error) {
	if s.dest == nil {
		j := &s.j
		s.dest = []any{&j.Seq, &j.ID, &j.Command, &s.state, &j.Queue, &j.Priority, &j.Attempts,
			&j.MaxRetries, &j.BackoffBase, &j.Runs, &j.Lost, &s.timeout, &s.env, &s.cwd, &s.uniqueKey,
			&s.runAt, &s.runAfter, &s.workerID, &s.lease, &s.lastError, &s.exitCode, &s.created,
			&s.updated, &s.finished, &j.Waiting, &s.deadBy, &s.hooks, &s.limits, &s.cancelAt, &s.waitingOn}
	}
	if err := row.Scan(s.dest...); err != nil {
		return Job{}, err
	}
	j := s.j // s.j holds the scanned fields only; the rest are set below
	j.DeadBy, j.CancelAt = s.deadBy.String, nanosTime(s.cancelAt)
	if s.waitingOn.Valid {
		j.WaitingOn = strings.Fields(s.waitingOn.String)
		slices.Sort(j.WaitingOn)
	}
	if s.hooks.Valid {
		if err := json.Unmarshal([]byte(s.hooks.String), &j.Hooks); err != nil {
			return Job{}, fmt.Errorf("job %s: hooks: %w", j.ID, err)
		}
	}
	if s.limits.Valid {
		if err := json.Unmarshal([]byte(s.limits.String), &j.Limits); err != nil {
			return Job{}, fmt.Errorf("job %s: limits: %w", j.ID, err)
		}
	}
	j.State = State(s.state)
	j.Timeout = time.Duration(s.timeout)
	if s.env.Valid {
		if err := json.Unmarshal([]byte(s.env.String), &j.Env); err != nil {
			return Job{}, fmt.Errorf("job %s: env: %w", j.ID, err)
		}
	}
	j.Cwd, j.UniqueKey, j.WorkerID, j.LastError = s.cwd.String, s.uniqueKey.String, s.workerID.String, s.lastError.String
	j.RunAt, j.LeaseUntil, j.FinishedAt = nanosTime(s.runAt), nanosTime(s.lease), nanosTime(s.finished)
	j.RunAfter = time.Unix(0, s.runAfter).UTC()
	j.CreatedAt, j.UpdatedAt = time.Unix(0, s.created).UTC(), time.Unix(0, s.updated).UTC()
	if s.exitCode.Valid {
		code := int(s.exitCode.Int64)
		j.ExitCode = &code
	}
	return j, nil
}

// nanosTime is a nullable unix-nanosecond column as a UTC time.
func nanosTime(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// ScanTails makes a run's Tails from its size columns: nil when they are
// NULL (nothing was kept). The bytes are the caller's to add (SetTailData).
func ScanTails(stdoutSize, stderrSize sql.NullInt64) *Tails {
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

// TailColumns are the values of a run's tail columns, in the order both
// engines store them: stdout_size, stderr_size, stdout_tail, stderr_tail.
// All NULL for nil; a stream that printed nothing has a NULL tail.
func (ts *Tails) TailColumns() [4]any {
	if ts == nil {
		return [4]any{}
	}
	return [4]any{ts.Stdout.Size, ts.Stderr.Size, blob(ts.Stdout.Data), blob(ts.Stderr.Data)}
}

// blob is b as a column value: NULL when empty.
func blob(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

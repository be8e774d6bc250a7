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
	var j Job
	var state string
	var timeout int64
	var env, cwd, uniqueKey, workerID, lastError sql.NullString
	var deadBy, hooks, limits, waitingOn sql.NullString
	var runAt, lease, finished, cancelAt sql.NullInt64
	var runAfter, created, updated int64
	var exitCode sql.NullInt64
	err := row.Scan(&j.Seq, &j.ID, &j.Command, &state, &j.Queue, &j.Priority, &j.Attempts,
		&j.MaxRetries, &j.BackoffBase, &j.Runs, &j.Lost, &timeout, &env, &cwd, &uniqueKey,
		&runAt, &runAfter, &workerID, &lease, &lastError, &exitCode, &created, &updated, &finished,
		&j.Waiting, &deadBy, &hooks, &limits, &cancelAt, &waitingOn)
	if err != nil {
		return Job{}, err
	}
	j.DeadBy, j.CancelAt = deadBy.String, nanosTime(cancelAt)
	if waitingOn.Valid {
		j.WaitingOn = strings.Fields(waitingOn.String)
		slices.Sort(j.WaitingOn)
	}
	if hooks.Valid {
		if err := json.Unmarshal([]byte(hooks.String), &j.Hooks); err != nil {
			return Job{}, fmt.Errorf("job %s: hooks: %w", j.ID, err)
		}
	}
	if limits.Valid {
		if err := json.Unmarshal([]byte(limits.String), &j.Limits); err != nil {
			return Job{}, fmt.Errorf("job %s: limits: %w", j.ID, err)
		}
	}
	j.State = State(state)
	j.Timeout = time.Duration(timeout)
	if env.Valid {
		if err := json.Unmarshal([]byte(env.String), &j.Env); err != nil {
			return Job{}, fmt.Errorf("job %s: env: %w", j.ID, err)
		}
	}
	j.Cwd, j.UniqueKey, j.WorkerID, j.LastError = cwd.String, uniqueKey.String, workerID.String, lastError.String
	j.RunAt, j.LeaseUntil, j.FinishedAt = nanosTime(runAt), nanosTime(lease), nanosTime(finished)
	j.RunAfter = time.Unix(0, runAfter).UTC()
	j.CreatedAt, j.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	if exitCode.Valid {
		code := int(exitCode.Int64)
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

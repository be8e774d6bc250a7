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

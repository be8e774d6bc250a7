package claim

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

const jobColumns = `seq, id, command, state, queue, priority, attempts, max_retries,
	backoff_base, runs, lost, timeout_ns, env, cwd, unique_key, run_at, run_after,
	worker_id, lease_until, last_error, exit_code, created_at, updated_at, finished_at`

type scanner interface{ Scan(dest ...any) error }

func scanJob(row scanner) (Job, error) {
	var j Job
	var state string
	var timeout int64
	var env, cwd, uniqueKey, workerID, lastError sql.NullString
	var runAt, lease, finished sql.NullInt64
	var runAfter, created, updated int64
	var exitCode sql.NullInt64
	err := row.Scan(&j.Seq, &j.ID, &j.Command, &state, &j.Queue, &j.Priority, &j.Attempts,
		&j.MaxRetries, &j.BackoffBase, &j.Runs, &j.Lost, &timeout, &env, &cwd, &uniqueKey,
		&runAt, &runAfter, &workerID, &lease, &lastError, &exitCode, &created, &updated, &finished)
	if err != nil {
		return Job{}, err
	}
	j.State = State(state)
	j.Timeout = time.Duration(timeout)
	if env.Valid {
		if err := json.Unmarshal([]byte(env.String), &j.Env); err != nil {
			return Job{}, fmt.Errorf("job %s: env: %w", j.ID, err)
		}
	}
	j.Cwd, j.UniqueKey, j.WorkerID, j.LastError = cwd.String, uniqueKey.String, workerID.String, lastError.String
	j.RunAt, j.LeaseUntil, j.FinishedAt = fromNanos(runAt), fromNanos(lease), fromNanos(finished)
	j.RunAfter = time.Unix(0, runAfter).UTC()
	j.CreatedAt, j.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	if exitCode.Valid {
		code := int(exitCode.Int64)
		j.ExitCode = &code
	}
	return j, nil
}

// Get returns the job with the given id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Job, error) {
	j, err := scanJob(s.queryRow(ctx, nil, "SELECT "+jobColumns+" FROM jobs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Job{}, fmt.Errorf("get job %s: %w", id, err)
	}
	return j, nil
}

// Filter selects jobs for List. Zero fields select everything.
type Filter struct {
	State State
	Queue string
	// IDPrefix keeps the jobs whose id starts with it, and orders them by
	// id (generated ids sort by creation time), so that the id index finds
	// them at any store size.
	IDPrefix string
	Limit    int  // 0: no limit
	Newest   bool // newest first (with IDPrefix: highest id first)
	// After continues a listing after the job with this Seq, in the list's
	// order: a page costs the same at the millionth job as at the first
	// (keyset pagination). 0: from the start. AfterID is the same for an
	// IDPrefix listing, which is ordered by id.
	After   int64
	AfterID string
}

// List returns jobs in enqueue order (see Filter for the others).
// Errors: ErrInvalid for an IDPrefix no job id can start with.
func (s *Store) List(ctx context.Context, f Filter) ([]Job, error) {
	from, empty, err := s.listIndex(ctx, f)
	if err != nil || empty {
		return nil, err
	}
	var where []string
	var args []any
	if f.State != "" {
		where, args = append(where, "state = ?"), append(args, string(f.State))
	}
	if f.Queue != "" {
		where, args = append(where, "queue = ?"), append(args, f.Queue)
	}
	order := "seq"
	switch {
	case f.IDPrefix != "":
		if !ValidID(f.IDPrefix) {
			return nil, invalidf("no job id starts with %q: ids are letters, digits and . _ -, starting with a letter or digit", f.IDPrefix)
		}
		// The prefix as one range of the id index, [lower, upper): the
		// prefix up to the prefix with its last byte raised (id bytes are
		// ASCII below 0x7f, so it cannot carry), narrowed by the cursor.
		// One range, so the index is entered at the cursor, not scanned to it.
		order = "id"
		lower, upper := f.IDPrefix, f.IDPrefix[:len(f.IDPrefix)-1]+string(f.IDPrefix[len(f.IDPrefix)-1]+1)
		lowerOp := ">="
		if f.AfterID != "" && f.Newest {
			upper = min(upper, f.AfterID)
		} else if f.AfterID != "" && f.AfterID >= lower {
			lower, lowerOp = f.AfterID, ">"
		}
		where, args = append(where, "id "+lowerOp+" ? AND id < ?"), append(args, lower, upper)
	case f.After != 0 && f.Newest:
		where, args = append(where, "seq < ?"), append(args, f.After)
	case f.After != 0:
		where, args = append(where, "seq > ?"), append(args, f.After)
	}
	q := "SELECT " + jobColumns + " FROM jobs" + from
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY " + order
	if f.Newest {
		q += " DESC"
	}
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return s.queryJobs(ctx, q, args...)
}

// listIndex picks the index for a listing by both state and queue, which
// SQLite cannot judge without statistics: the one of the two with fewer
// jobs, read newest (or oldest) first until the page is full. The counts
// are exact (queue_counts), so a combination without jobs costs no scan
// at all (empty).
func (s *Store) listIndex(ctx context.Context, f Filter) (from string, empty bool, err error) {
	if f.State == "" || f.Queue == "" || f.IDPrefix != "" {
		return "", false, nil
	}
	counts, err := s.QueueCounts(ctx)
	if err != nil {
		return "", false, err
	}
	if counts[f.Queue][f.State] == 0 {
		return "", true, nil
	}
	inState, inQueue := 0, 0
	for q, c := range counts {
		inState += c[f.State]
		if q == f.Queue {
			for _, n := range c {
				inQueue += n
			}
		}
	}
	if inState < inQueue {
		return " INDEXED BY jobs_state", false, nil
	}
	return " INDEXED BY jobs_queue", false, nil
}

func (s *Store) queryJobs(ctx context.Context, q string, args ...any) ([]Job, error) {
	rows, err := s.query(ctx, nil, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Counts returns the number of jobs in each state; every state is present.
func (s *Store) Counts(ctx context.Context) (map[State]int, error) {
	byQueue, err := s.QueueCounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[State]int, len(States))
	for _, st := range States {
		out[st] = 0
	}
	for _, counts := range byQueue {
		for st, n := range counts {
			out[st] += n
		}
	}
	return out, nil
}

// QueueCounts returns the number of jobs per queue and state, leaving out
// the zeros: a queue without jobs is absent. It reads a few rows at any
// store size.
func (s *Store) QueueCounts(ctx context.Context) (map[string]map[State]int, error) {
	// queue_counts is kept by enqueue and by triggers (migration4.sql) in
	// the transactions that change jobs: counting them would take a tenth
	// of a second at a million.
	rows, err := s.query(ctx, nil, "SELECT queue, state, n FROM queue_counts WHERE n <> 0")
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	out := map[string]map[State]int{}
	for rows.Next() {
		var queue, st string
		var n int
		if err := rows.Scan(&queue, &st, &n); err != nil {
			return nil, fmt.Errorf("count jobs: %w", err)
		}
		if out[queue] == nil {
			out[queue] = map[State]int{}
		}
		out[queue][State(st)] = n
	}
	return out, rows.Err()
}

const runColumns = `job_id, attempt, worker_id, host, pid, pgid, started_at, exec_at, ended_at,
	outcome, exit_code, error, stdout_path, stderr_path`

func scanRun(row scanner) (Run, error) {
	var r Run
	var pgid, execAt, ended, exitCode sql.NullInt64
	var started int64
	var outcome, errText, stdout, stderr sql.NullString
	err := row.Scan(&r.JobID, &r.Attempt, &r.WorkerID, &r.Host, &r.PID, &pgid, &started,
		&execAt, &ended, &outcome, &exitCode, &errText, &stdout, &stderr)
	if err != nil {
		return Run{}, err
	}
	r.PGID = int(pgid.Int64)
	r.StartedAt, r.ExecAt, r.EndedAt = time.Unix(0, started).UTC(), fromNanos(execAt), fromNanos(ended)
	r.Outcome, r.Error, r.StdoutPath, r.StderrPath = outcome.String, errText.String, stdout.String, stderr.String
	if exitCode.Valid {
		code := int(exitCode.Int64)
		r.ExitCode = &code
	}
	return r, nil
}

// Runs returns every run of a job, first attempt first.
func (s *Store) Runs(ctx context.Context, jobID string) ([]Run, error) {
	rows, err := s.query(ctx, nil, "SELECT "+runColumns+" FROM runs WHERE job_id = ? ORDER BY attempt", jobID)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

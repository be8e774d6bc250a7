package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/queuectl/queuectl/claim"
)

const jobColumns = `seq, id, command, state, queue, priority, attempts, max_retries,
	backoff_base, runs, lost, timeout_ns, env, cwd, unique_key, run_at, run_after,
	worker_id, lease_until, last_error, exit_code, created_at, updated_at, finished_at,
	waiting, dead_by, hooks, limits, cancel_at, label, umask,
	CASE WHEN waiting > 0 THEN (SELECT group_concat(after_id, ' ') FROM deps WHERE job_id = id AND met = 0) END`

// afterColumn is the ids the job of the row runs after, met or not
// (claim.ScanJobAfter): one probe of the deps_job index.
const afterColumn = `(SELECT group_concat(after_id, ' ') FROM deps WHERE job_id = id)`

// Get returns the job with the given id, or ErrNotFound.
func (e *Engine) Get(ctx context.Context, id string) (claim.Job, error) {
	j, err := claim.ScanJobAfter(e.queryRow(ctx, nil, "SELECT "+jobColumns+", "+afterColumn+" FROM jobs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return claim.Job{}, claim.NotFoundError(id)
	}
	if err != nil {
		return claim.Job{}, fmt.Errorf("get job %s: %w", id, err)
	}
	return j, nil
}

// getAllQuery reads the jobs whose ids its one parameter, a JSON array,
// lists: each is found by the id's index, never by a scan of jobs.
const getAllQuery = "SELECT " + jobColumns + " FROM jobs WHERE id IN (SELECT value FROM json_each(?))"

// GetAll reads the jobs of ids in one statement: the ids go as one JSON
// array, whatever their number (bound parameters are limited).
func (e *Engine) GetAll(ctx context.Context, ids []string) iter.Seq2[claim.Job, error] {
	return func(yield func(claim.Job, error) bool) {
		list, err := json.Marshal(ids)
		if err != nil {
			yield(claim.Job{}, fmt.Errorf("get %d jobs: %w", len(ids), err))
			return
		}
		rows, err := e.query(ctx, nil, getAllQuery, string(list))
		if err != nil {
			yield(claim.Job{}, fmt.Errorf("get %d jobs: %w", len(ids), err))
			return
		}
		defer rows.Close()
		var scan claim.JobScanner
		if err := claim.Stream(rows, scan.Scan, yield); err != nil {
			yield(claim.Job{}, fmt.Errorf("get %d jobs: %w", len(ids), err))
		}
	}
}

// Jobs streams the jobs f selects, in f's order, one row in memory at a
// time: `list` of a million jobs starts at once and stays small. The read
// holds the engine's one connection until the caller stops ranging.
func (e *Engine) Jobs(ctx context.Context, f claim.Filter) iter.Seq2[claim.Job, error] {
	return func(yield func(claim.Job, error) bool) {
		q, args, empty, err := e.listQuery(ctx, f)
		if err != nil {
			yield(claim.Job{}, err)
			return
		}
		if empty {
			return
		}
		rows, err := e.query(ctx, nil, q, args...)
		if err != nil {
			yield(claim.Job{}, fmt.Errorf("list jobs: %w", err))
			return
		}
		defer rows.Close()
		var scan claim.JobScanner
		if err := claim.Stream(rows, scan.Scan, yield); err != nil {
			yield(claim.Job{}, fmt.Errorf("list jobs: %w", err))
		}
	}
}

// CountIDPrefix counts the jobs whose id starts with prefix, up to limit.
func (e *Engine) CountIDPrefix(ctx context.Context, prefix string, limit int) (int, error) {
	var n int
	err := e.queryRow(ctx, nil, "SELECT count(*) FROM (SELECT 1 FROM jobs WHERE id >= ? AND id < ? LIMIT ?)",
		prefix, claim.IDPrefixEnd(prefix), limit).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count jobs %s…: %w", prefix, err)
	}
	return n, nil
}

// listQuery builds the listing's statement; empty: nothing can match.
func (e *Engine) listQuery(ctx context.Context, f claim.Filter) (q string, args []any, empty bool, err error) {
	from, empty, err := e.listIndex(ctx, f)
	if err != nil || empty {
		return "", nil, empty, err
	}
	var where []string
	if f.State != "" {
		where, args = append(where, "state = ?"), append(args, string(f.State))
	}
	if f.Queue != "" {
		where, args = append(where, "queue = ?"), append(args, f.Queue)
	}
	if f.Label != "" {
		where, args = append(where, "label = ?"), append(args, f.Label)
	}
	order := "seq"
	switch {
	case f.IDPrefix != "":
		// The prefix as one range of the id index, [lower, upper),
		// narrowed by the cursor: one range, so the index is entered at
		// the cursor, not scanned to it.
		order = "id"
		lower, upper := f.IDPrefix, claim.IDPrefixEnd(f.IDPrefix)
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
	q = "SELECT " + jobColumns + " FROM jobs" + from
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
	return q, args, false, nil
}

// listIndex picks the index for a listing by both state and queue, which
// SQLite cannot judge without statistics: the one of the two with fewer
// jobs, read newest (or oldest) first until the page is full. The counts
// are exact (queue_counts), so a combination without jobs costs no scan
// at all (empty).
func (e *Engine) listIndex(ctx context.Context, f claim.Filter) (from string, empty bool, err error) {
	if f.Label != "" && f.IDPrefix == "" {
		return " INDEXED BY jobs_label", false, nil
	}
	if f.State == "" || f.Queue == "" || f.IDPrefix != "" {
		return "", false, nil
	}
	counts, err := e.QueueCounts(ctx)
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

func (e *Engine) queryJobs(ctx context.Context, q string, args ...any) ([]claim.Job, error) {
	var scan claim.JobScanner
	return queryAll(ctx, e, "list jobs", scan.Scan, q, args...)
}

// queryAll runs q on its own (through the statement cache) and returns
// what scan reads from each row, in order; its errors name the operation,
// what.
func queryAll[T any](ctx context.Context, e *Engine, what string, scan func(claim.Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := e.query(ctx, nil, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	out, err := claim.Collect(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// QueueCounts returns the jobs per queue and state, without zeros.
func (e *Engine) QueueCounts(ctx context.Context) (map[string]map[claim.State]int, error) {
	// queue_counts is kept by enqueue and by triggers (migration4.sql) in
	// the transactions that change jobs: counting them would take a tenth
	// of a second at a million.
	rows, err := e.query(ctx, nil, "SELECT queue, state, n FROM queue_counts WHERE n <> 0")
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	out, err := claim.CollectCounts(rows)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	return out, nil
}

const runColumns = `job_id, attempt, worker_id, host, pid, pgid, started_at, exec_at, ended_at,
	outcome, exit_code, error, stdout_path, stderr_path, hooks, confined, stdout_size, stderr_size`

// Runs returns every run of a job, first attempt first, with the bytes of
// their tails when tails is set.
func (e *Engine) Runs(ctx context.Context, jobID string, tails bool) ([]claim.Run, error) {
	cols, scan := runColumns, claim.ScanRunRow
	if tails {
		cols, scan = cols+", stdout_tail, stderr_tail", claim.ScanRunTails
	}
	return queryAll(ctx, e, "list runs", scan, "SELECT "+cols+" FROM runs WHERE job_id = ? ORDER BY attempt", jobID)
}

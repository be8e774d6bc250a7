package postgres

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

const jobColumns = `seq, id, command, state, queue, priority, attempts, max_retries,
	backoff_base, runs, lost, timeout_ns, env, cwd, unique_key, run_at, run_after,
	worker_id, lease_until, last_error, exit_code, created_at, updated_at, finished_at,
	waiting, dead_by, hooks, limits, cancel_at, label, umask,
	CASE WHEN waiting > 0 THEN (SELECT string_agg(d.after_id, ' ') FROM deps d WHERE d.job_id = jobs.id AND NOT d.met) END`

// jobColumnsQualified is jobColumns of the jobs table, where another table
// in the statement has columns of the same names.
const jobColumnsQualified = `jobs.seq, jobs.id, jobs.command, jobs.state, jobs.queue,
	jobs.priority, jobs.attempts, jobs.max_retries, jobs.backoff_base, jobs.runs, jobs.lost,
	jobs.timeout_ns, jobs.env, jobs.cwd, jobs.unique_key, jobs.run_at, jobs.run_after,
	jobs.worker_id, jobs.lease_until, jobs.last_error, jobs.exit_code, jobs.created_at,
	jobs.updated_at, jobs.finished_at, jobs.waiting, jobs.dead_by, jobs.hooks, jobs.limits, jobs.cancel_at, jobs.label, jobs.umask,
	CASE WHEN jobs.waiting > 0 THEN (SELECT string_agg(d.after_id, ' ') FROM deps d WHERE d.job_id = jobs.id AND NOT d.met) END`

// afterColumn is the ids the job of the row runs after, met or not
// (claim.ScanJobAfter): one probe of the deps_job index.
const afterColumn = `(SELECT string_agg(d.after_id, ' ') FROM deps d WHERE d.job_id = jobs.id)`

// Get returns the job with the given id, or ErrNotFound.
func (e *Engine) Get(ctx context.Context, id string) (claim.Job, error) {
	j, err := claim.ScanJobAfter(e.pool.QueryRow(ctx, "SELECT "+jobColumns+", "+afterColumn+" FROM jobs WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return claim.Job{}, claim.NotFoundError(id)
	}
	if err != nil {
		return claim.Job{}, classify(fmt.Errorf("get job %s: %w", id, err))
	}
	return j, nil
}

// GetAll reads the jobs of ids in one statement, the ids as one array.
func (e *Engine) GetAll(ctx context.Context, ids []string) iter.Seq2[claim.Job, error] {
	return func(yield func(claim.Job, error) bool) {
		rows, err := e.pool.Query(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ANY($1)", ids)
		if err != nil {
			yield(claim.Job{}, classify(fmt.Errorf("get %d jobs: %w", len(ids), err)))
			return
		}
		defer rows.Close()
		var scan claim.JobScanner
		if err := claim.Stream(rows, scan.Scan, yield); err != nil {
			yield(claim.Job{}, classify(fmt.Errorf("get %d jobs: %w", len(ids), err)))
		}
	}
}

// Jobs streams the jobs f selects, in f's order, a row at a time.
func (e *Engine) Jobs(ctx context.Context, f claim.Filter) iter.Seq2[claim.Job, error] {
	return func(yield func(claim.Job, error) bool) {
		q, args := listQuery(f)
		rows, err := e.pool.Query(ctx, q, args...)
		if err != nil {
			yield(claim.Job{}, classify(fmt.Errorf("list jobs: %w", err)))
			return
		}
		defer rows.Close()
		var scan claim.JobScanner
		if err := claim.Stream(rows, scan.Scan, yield); err != nil {
			yield(claim.Job{}, classify(fmt.Errorf("list jobs: %w", err)))
		}
	}
}

// CountIDPrefix counts the jobs whose id starts with prefix, up to limit.
func (e *Engine) CountIDPrefix(ctx context.Context, prefix string, limit int) (int, error) {
	var n int
	err := e.pool.QueryRow(ctx, "SELECT count(*) FROM (SELECT 1 FROM jobs WHERE id >= $1 AND id < $2 LIMIT $3) m",
		prefix, claim.IDPrefixEnd(prefix), limit).Scan(&n)
	if err != nil {
		return 0, classify(fmt.Errorf("count jobs %s…: %w", prefix, err))
	}
	return n, nil
}

// listQuery builds a listing's statement.
func listQuery(f claim.Filter) (string, []any) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.State != "" {
		where = append(where, "state = "+arg(string(f.State)))
	}
	if f.Queue != "" {
		where = append(where, "queue = "+arg(f.Queue))
	}
	if f.Label != "" {
		where = append(where, "label = "+arg(f.Label))
	}
	order, cursor, after := "seq", "seq", any(f.After)
	if f.IDPrefix != "" {
		// The prefix as a range of the id index (ids compare as bytes:
		// COLLATE "C" in schema.sql).
		where = append(where, "id >= "+arg(f.IDPrefix)+" AND id < "+arg(claim.IDPrefixEnd(f.IDPrefix)))
		order, cursor, after = "id", "id", f.AfterID
	}
	if f.After != 0 || f.AfterID != "" {
		op := " > "
		if f.Newest {
			op = " < "
		}
		where = append(where, cursor+op+arg(after))
	}
	q := "SELECT " + jobColumns + " FROM jobs"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY " + order
	if f.Newest {
		q += " DESC"
	}
	if f.Limit > 0 {
		q += " LIMIT " + arg(f.Limit)
	}
	return q, args
}

func (e *Engine) queryJobs(ctx context.Context, q string, args ...any) ([]claim.Job, error) {
	var scan claim.JobScanner
	return queryAll(ctx, e, "list jobs", scan.Scan, q, args...)
}

// queryAll runs q on the pool and returns what scan reads from each row,
// in order; its errors name the operation, what, and are classified.
func queryAll[T any](ctx context.Context, e *Engine, what string, scan func(claim.Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := e.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, classify(fmt.Errorf("%s: %w", what, err))
	}
	defer rows.Close()
	out, err := claim.Collect(rows, scan)
	if err != nil {
		return nil, classify(fmt.Errorf("%s: %w", what, err))
	}
	return out, nil
}

// QueueCounts sums the shards of queue_counts (schema.sql).
func (e *Engine) QueueCounts(ctx context.Context) (map[string]map[claim.State]int, error) {
	rows, err := e.pool.Query(ctx, `SELECT queue, state, sum(n) FROM queue_counts
		GROUP BY queue, state HAVING sum(n) <> 0`)
	if err != nil {
		return nil, classify(fmt.Errorf("count jobs: %w", err))
	}
	defer rows.Close()
	out, err := claim.CollectCounts(rows)
	if err != nil {
		return nil, classify(fmt.Errorf("count jobs: %w", err))
	}
	return out, nil
}

const runColumns = `job_id, attempt, worker_id, host, pid, pgid, started_at, exec_at, ended_at,
	outcome, exit_code, error, stdout_path, stderr_path, hooks, confined, stdout_size, stderr_size`

const runColumnsQualified = `r.job_id, r.attempt, r.worker_id, r.host, r.pid, r.pgid,
	r.started_at, r.exec_at, r.ended_at, r.outcome, r.exit_code, r.error, r.stdout_path,
	r.stderr_path, r.hooks, r.confined, r.stdout_size, r.stderr_size`

// Runs returns every run of a job, first attempt first, with the bytes of
// their tails when tails is set.
func (e *Engine) Runs(ctx context.Context, jobID string, tails bool) ([]claim.Run, error) {
	cols, scan := runColumns, claim.ScanRunRow
	if tails {
		cols, scan = cols+", stdout_tail, stderr_tail", claim.ScanRunTails
	}
	return queryAll(ctx, e, "list runs", scan, "SELECT "+cols+" FROM runs WHERE job_id = $1 ORDER BY attempt", jobID)
}

// RunsPerMinute counts ended runs per minute and outcome from runs_ended.
func (e *Engine) RunsPerMinute(ctx context.Context, since time.Time) ([]claim.MinuteRuns, error) {
	const minute = int64(time.Minute)
	return queryAll(ctx, e, "count runs per minute", claim.ScanMinuteRuns, `SELECT ended_at / $1 AS m, outcome, count(*) FROM runs
		WHERE ended_at >= $2 GROUP BY m, outcome ORDER BY m, outcome`, minute, since.UnixNano())
}

// EndedRuns returns up to limit runs that ended after mark.
func (e *Engine) EndedRuns(ctx context.Context, after claim.RunMark, limit int) ([]claim.Run, error) {
	var at int64
	if !after.EndedAt.IsZero() {
		at = after.EndedAt.UnixNano()
	}
	return queryAll(ctx, e, "list ended runs", claim.ScanRunRow, "SELECT "+runColumns+` FROM runs
		WHERE ended_at >= $1 AND (ended_at > $1 OR job_id > $2 OR (job_id = $2 AND attempt > $3))
		ORDER BY ended_at, job_id, attempt LIMIT $4`,
		at, after.JobID, after.Attempt, limit)
}

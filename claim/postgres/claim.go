package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// claimQuery is the claim, River's shape: the CTE picks the first runnable
// job in claim order and locks it, skipping rows other claimants hold
// locked, and the UPDATE takes it, in one statement. A concurrent claimant
// cannot take the same row (it is locked until this transaction ends) and
// does not wait for it either (SKIP LOCKED): it takes the next. The scan
// follows jobs_runnable, so it costs the same at any number of jobs.
const claimQuery = `WITH next AS (
	SELECT seq FROM jobs
	WHERE state IN ('pending', 'failed') AND waiting = 0 AND run_after <= $1` + underLimit + notPaused + `
	ORDER BY priority DESC, run_after, seq
	LIMIT 1
	FOR UPDATE SKIP LOCKED)
UPDATE jobs SET state = 'processing', attempts = attempts + 1, runs = runs + 1,
	worker_id = $2, lease_until = $3, updated_at = $1
FROM next WHERE jobs.seq = next.seq
RETURNING ` + jobColumnsQualified

// claimQueuesQuery is claimQuery for some queues only.
const claimQueuesQuery = `WITH next AS (
	SELECT seq FROM jobs
	WHERE state IN ('pending', 'failed') AND waiting = 0 AND run_after <= $1 AND queue = ANY($4)` + underLimit + notPaused + `
	ORDER BY priority DESC, run_after, seq
	LIMIT 1
	FOR UPDATE SKIP LOCKED)
UPDATE jobs SET state = 'processing', attempts = attempts + 1, runs = runs + 1,
	worker_id = $2, lease_until = $3, updated_at = $1
FROM next WHERE jobs.seq = next.seq
RETURNING ` + jobColumnsQualified

const insertRun = `INSERT INTO runs (job_id, attempt, worker_id, host, pid,
	started_at, stdout_path, stderr_path) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

// underLimit is the claim's condition that a job's queue has room: fewer
// of its jobs processing than its limit (queue_limits). Claims run READ
// COMMITTED in parallel, so a count read by two of them at once could let
// both take a queue's last slot: while any queue has a limit, every claim
// transaction first takes one advisory lock (beginClaim), which it holds
// until it commits, so each claim reads the counts its predecessors
// committed. Without limits, claims take no lock and run side by side.
const underLimit = `
	AND queue NOT IN (SELECT l.queue FROM queue_limits l
		WHERE l.max_running > 0 AND l.max_running <= (SELECT coalesce(sum(c.n), 0) FROM queue_counts c
			WHERE c.queue = l.queue AND c.state = 'processing'))`

// beginClaim begins a light transaction for a claim, and takes the claim
// lock if any queue has a limit (underLimit), in one round trip.
func (e *Engine) beginClaim() pgx.TxOptions {
	return pgx.TxOptions{BeginQuery: fmt.Sprintf(`BEGIN; SET LOCAL synchronous_commit = off;
		SELECT pg_advisory_xact_lock(%d) FROM queue_limits WHERE max_running > 0 LIMIT 1`, e.claimKey)}
}

// Claim takes the next job in one light transaction.
func (e *Engine) Claim(ctx context.Context, p claim.ClaimParams) (claim.Job, claim.Run, error) {
	var j claim.Job
	var r claim.Run
	err := e.writeTx(ctx, e.beginClaim(), func(tx pgx.Tx) (err error) {
		j, r, err = claimIn(ctx, tx, p)
		return err
	})
	return j, r, err
}

// CompleteAndClaim finishes done and claims next in one light transaction.
func (e *Engine) CompleteAndClaim(ctx context.Context, done claim.FinishParams, next claim.ClaimParams) (j claim.Job, r claim.Run, lost bool, err error) {
	var none bool
	err = e.writeTx(ctx, e.beginClaim(), func(tx pgx.Tx) error {
		_, err := e.finishIn(ctx, tx, done)
		if lost = errors.Is(err, claim.ErrLost); err != nil && !lost {
			return err
		}
		j, r, err = claimIn(ctx, tx, next)
		if none = errors.Is(err, claim.ErrNoJob); none {
			return nil // commit the completion
		}
		return err
	})
	if err != nil {
		return claim.Job{}, claim.Run{}, false, err
	}
	if none {
		return claim.Job{}, claim.Run{}, lost, claim.ErrNoJob
	}
	return j, r, lost, nil
}

// claimIn claims in tx and records the run.
func claimIn(ctx context.Context, tx pgx.Tx, p claim.ClaimParams) (claim.Job, claim.Run, error) {
	now := p.Now.UnixNano()
	args := []any{now, p.WorkerID, now + int64(p.Lease)}
	q := claimQuery
	if len(p.Queues) > 0 {
		q, args = claimQueuesQuery, append(args, p.Queues)
	}
	j, err := claim.ScanJob(tx.QueryRow(ctx, q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return claim.Job{}, claim.Run{}, claim.ErrNoJob
	}
	if err != nil {
		return claim.Job{}, claim.Run{}, fmt.Errorf("claim job: %w", err)
	}
	r := claim.NewRun(p.Claimant, j, p.Now)
	_, err = tx.Exec(ctx, insertRun, r.JobID, r.Attempt, r.WorkerID, r.Host, r.PID, now, r.StdoutPath, r.StderrPath)
	if err != nil {
		return claim.Job{}, claim.Run{}, fmt.Errorf("record run: %w", err)
	}
	return j, r, nil
}

// Started records the process group of a run and when its command started.
func (e *Engine) Started(ctx context.Context, r claim.Run, pgid int, at time.Time) error {
	err := e.write(ctx, light, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE runs SET pgid = $1, exec_at = $2, confined = $3 WHERE job_id = $4 AND attempt = $5",
			pgid, at.UnixNano(), nullString(r.Confined), r.JobID, r.Attempt)
		return err
	})
	if err != nil {
		return fmt.Errorf("record run start: %w", err)
	}
	return nil
}

// finishQuery moves the job of a run that ends, as FinishParams says, and
// closes the run, in one statement: only while the run is the current one
// of the processing job, of its worker (else no row comes back: ErrLost,
// and the run, ended by whoever recovered it, is left alone). It wakes the
// listeners when it commits.
const finishQuery = `WITH job AS (
	UPDATE jobs SET state = CASE WHEN cancel_at IS NULL THEN $1 ELSE 'canceled' END, attempts = attempts - $2,
		exit_code = CASE WHEN $3::boolean THEN $4::integer ELSE exit_code END,
		last_error = CASE WHEN $5::boolean THEN $6::text ELSE last_error END,
		run_after = coalesce($7, run_after), worker_id = NULL, lease_until = NULL,
		updated_at = $8, finished_at = CASE WHEN cancel_at IS NULL THEN $9::bigint ELSE $8::bigint END
	WHERE id = $10 AND state = 'processing' AND runs = $11 AND worker_id = $12
	RETURNING id, state),
run AS (
	UPDATE runs SET ended_at = $8, outcome = $13, exit_code = $4, error = $6,
		stdout_size = $15, stderr_size = $16, stdout_tail = $17, stderr_tail = $18
	FROM job WHERE runs.job_id = job.id AND runs.attempt = $11)
SELECT job.state FROM job, pg_notify($14, '') AS wake`

// Finish applies p in one transaction, durable or light as p says, and
// returns the job's new state: canceled, whatever p says, for a job that
// `cancel` marked.
func (e *Engine) Finish(ctx context.Context, p claim.FinishParams) (claim.State, error) {
	d := light
	if p.Durable {
		d = durable
	}
	var next claim.State
	err := e.write(ctx, d, func(tx pgx.Tx) (err error) {
		next, err = e.finishIn(ctx, tx, p)
		return err
	})
	return next, err
}

// finishIn is the transaction of Finish: ErrLost when the job is no longer
// the run's.
func (e *Engine) finishIn(ctx context.Context, tx pgx.Tx, p claim.FinishParams) (claim.State, error) {
	now := p.Now.UnixNano()
	var finished sql.NullInt64
	if p.Finished {
		finished = sql.NullInt64{Int64: now, Valid: true}
	}
	uncount := 0
	if p.Uncount {
		uncount = 1
	}
	var next string
	t := p.Run.Tails.TailColumns()
	err := tx.QueryRow(ctx, finishQuery, string(p.State), uncount, p.SetExitCode, p.ExitCode, p.SetError,
		nullString(p.Error), nanos(p.RunAfter), now, finished, p.Run.JobID, p.Run.Attempt, p.Run.WorkerID,
		p.Outcome, e.channel, t[0], t[1], t[2], t[3]).Scan(&next)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("finish job %s attempt %d: %w", p.Run.JobID, p.Run.Attempt, claim.ErrLost)
	}
	if err != nil {
		return "", fmt.Errorf("finish job %s: %w", p.Run.JobID, err)
	}
	if claim.State(next) == claim.Completed {
		return claim.Completed, dependencyMet(ctx, tx, p.Run.JobID)
	}
	return claim.State(next), nil
}

// dependencyMet counts down the jobs waiting for id, which completed, and
// marks their dependency met: one statement, a probe of the deps key when
// nothing waits for id, which is nearly always.
func dependencyMet(ctx context.Context, tx pgx.Tx, id string) error {
	_, err := tx.Exec(ctx, `WITH met AS (
			UPDATE deps SET met = true WHERE after_id = $1 AND NOT met RETURNING job_id)
		UPDATE jobs SET waiting = waiting - 1 FROM met WHERE jobs.id = met.job_id`, id)
	if err != nil {
		return fmt.Errorf("count down the dependents of %s: %w", id, err)
	}
	return nil
}

// HasWork looks for a job runnable now or failed and waiting.
func (e *Engine) HasWork(ctx context.Context, queues []string, now time.Time) (bool, error) {
	var ok bool
	err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs
		WHERE state IN ('pending', 'failed') AND waiting = 0 AND (state = 'failed' OR run_after <= $1)
		AND (coalesce(cardinality($2::text[]), 0) = 0 OR queue = ANY($2))`+notPaused+`)`, now.UnixNano(), queues).Scan(&ok)
	if err != nil {
		return false, classify(fmt.Errorf("look for work: %w", err))
	}
	return ok, nil
}

// NextRunAfter finds the earliest not-before time still to come.
func (e *Engine) NextRunAfter(ctx context.Context, queues []string, now time.Time) (time.Time, error) {
	var next sql.NullInt64
	err := e.pool.QueryRow(ctx, `SELECT min(run_after) FROM jobs
		WHERE state IN ('pending', 'failed') AND waiting = 0 AND run_after > $1
		AND (coalesce(cardinality($2::text[]), 0) = 0 OR queue = ANY($2))`+notPaused, now.UnixNano(), queues).Scan(&next)
	if err != nil {
		return time.Time{}, classify(fmt.Errorf("look for scheduled work: %w", err))
	}
	return fromNanos(next), nil
}

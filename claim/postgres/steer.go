package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// notPaused is the condition of runnableQueues and unpausedQueues that a
// queue is not paused: part of the claim statement, so a pause
// holds for every claim that commits after it. NOT IN, not NOT EXISTS: the
// planner turns a NOT EXISTS into an anti join, which it costs as if a
// paused_queues of default size (it is nearly always empty) took most jobs
// away, and then scans and sorts every runnable job (2.5 s a claim at a
// million) instead of reading the claim's index in order up to the first
// row; NOT IN stays a hashed filter. Both columns are NOT
// NULL, so the two mean the same.
const notPaused = `
	AND NOT EXISTS (SELECT 1 FROM paused_queues WHERE queue = '*')
	AND queue NOT IN (SELECT p.queue FROM paused_queues p)`

// cancelSet is the one change `cancel` makes to a pending, failed or
// processing job ($1: now): one that is not running is canceled at once; a
// running one keeps its state and its updated_at (the start of its run, which
// RUNNING FOR counts from) and is marked (the first request kept). Under
// READ COMMITTED a row a claim or a finish holds is re-read once it is
// free, so the state tested is the state changed.
const cancelSet = ` SET
	state = CASE WHEN state = 'processing' THEN state ELSE 'canceled' END,
	cancel_at = coalesce(cancel_at, $1),
	finished_at = CASE WHEN state = 'processing' THEN finished_at ELSE $1 END,
	updated_at = CASE WHEN state = 'processing' THEN updated_at ELSE $1 END`

const unfinished = ` AND state IN ('pending', 'failed', 'processing', 'held')`

// Cancel is one UPDATE … RETURNING of the job, or a read of it as it is.
func (e *Engine) Cancel(ctx context.Context, p claim.CancelParams) (j claim.Job, changed bool, err error) {
	err = e.write(ctx, durable, func(tx pgx.Tx) error {
		j, changed, err = e.changeOrRead(ctx, tx, p.ID, "UPDATE jobs"+cancelSet+" WHERE id = $2"+unfinished+" RETURNING "+jobColumns,
			p.Now.UnixNano(), p.ID)
		return err
	})
	if err != nil {
		return claim.Job{}, false, fmt.Errorf("cancel job %s: %w", p.ID, err)
	}
	return j, changed, nil
}

// CancelQueue is Cancel's change to every unfinished job of the queue.
func (e *Engine) CancelQueue(ctx context.Context, p claim.CancelParams) ([]claim.Job, error) {
	var out []claim.Job
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "UPDATE jobs"+cancelSet+" WHERE queue = $2"+unfinished+" RETURNING "+jobColumns,
			p.Now.UnixNano(), p.Queue)
		if out, err = collectJobs(rows, err); err != nil || len(out) == 0 {
			return err
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return nil, fmt.Errorf("cancel queue %s: %w", p.Queue, err)
	}
	return out, nil
}

// CancelRequested reads the worker's marked processing jobs.
func (e *Engine) CancelRequested(ctx context.Context, workerID string) ([]claim.RunID, error) {
	rows, err := e.pool.Query(ctx, `SELECT id, runs FROM jobs
		WHERE state = 'processing' AND worker_id = $1 AND cancel_at IS NOT NULL`, workerID)
	if err != nil {
		return nil, classify(fmt.Errorf("look for canceled runs: %w", err))
	}
	out, err := scanRunIDs(rows)
	if err != nil {
		return nil, classify(fmt.Errorf("look for canceled runs: %w", err))
	}
	return out, nil
}

// restartSet is RestartParams' change ($1: now). A job whose run_at is
// still ahead (canceled before it ran) waits for it again.
const restartSet = ` SET state = 'pending', attempts = 0, lost = 0, run_after = greatest($1, coalesce(jobs.run_at, 0)),
	last_error = NULL, exit_code = NULL, finished_at = NULL, cancel_at = NULL, dead_by = NULL,
	worker_id = NULL, lease_until = NULL, updated_at = $1`

// Restart restarts one job, or every job in a state whose unique_key is
// free (the oldest of several sharing one), as RetryAll does.
func (e *Engine) Restart(ctx context.Context, p claim.RestartParams) (jobs []claim.Job, changed bool, r claim.Rearmed, err error) {
	now := p.Now.UnixNano()
	err = e.write(ctx, durable, func(tx pgx.Tx) error {
		if p.ID == "" {
			// In rounds, as RetryAll: a job waiting for one that stays dead,
			// canceled or removed stays as it is, never pending for ever.
			var err error
			if jobs, err = claim.InRounds(func() ([]claim.Job, error) { return restartRound(ctx, tx, p) }); err != nil {
				return err
			}
		} else {
			// A unique_key another live job holds is refused by
			// jobs_unique_key; a savepoint keeps tx usable to name that job.
			sp, err := tx.Begin(ctx)
			if err != nil {
				return err
			}
			j, err := claim.ScanJob(sp.QueryRow(ctx, "UPDATE jobs"+restartSet+
				" WHERE id = $2 AND state IN ('completed', 'dead', 'canceled') RETURNING "+jobColumns, now, p.ID))
			if isUnique(err) {
				sp.Rollback(ctx)
				h, err := keyHolder(ctx, tx, p.ID)
				if err != nil {
					return err
				}
				return claim.RestartHeldError(p.ID, h)
			}
			if spErr := sp.Commit(ctx); err == nil {
				err = spErr
			}
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				j, err = claim.ScanJob(tx.QueryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = $1", p.ID))
				if errors.Is(err, pgx.ErrNoRows) {
					return claim.NotFoundError(p.ID)
				}
				jobs = []claim.Job{j}
				return err
			case err != nil:
				return err
			}
			jobs = []claim.Job{j}
			if err := refuseBlocked(ctx, tx, p.ID); err != nil {
				return err
			}
		}
		changed = true
		for _, j := range jobs {
			one, err := rearm(ctx, tx, j.ID, p.Now)
			if err != nil {
				return err
			}
			if one.Rewaiting, err = rewait(ctx, tx, j.ID); err != nil {
				return err
			}
			r.Add(one)
		}
		if len(jobs) == 0 {
			return nil
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return nil, false, claim.Rearmed{}, fmt.Errorf("restart: %w", err)
	}
	return jobs, changed, r, nil
}

// Remove deletes a finished job; its runs go with it (ON DELETE CASCADE).
func (e *Engine) Remove(ctx context.Context, id string) (claim.State, error) {
	var st string
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		var gone string // the state of the job deleted
		err := tx.QueryRow(ctx, "DELETE FROM jobs WHERE id = $1 AND state IN ('completed', 'dead', 'canceled') RETURNING state", id).Scan(&gone)
		if err == nil {
			if err := refuseWaitedFor(ctx, tx, id); err != nil || gone != string(claim.Dead) {
				return err
			}
			return e.notify(ctx, tx) // dead/ of other hosts, as Purge
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		err = tx.QueryRow(ctx, "SELECT state FROM jobs WHERE id = $1", id).Scan(&st)
		if errors.Is(err, pgx.ErrNoRows) {
			return claim.NotFoundError(id)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("remove job %s: %w", id, err)
	}
	return claim.State(st), nil
}

// SetPaused inserts or deletes the queue's row of paused_queues.
func (e *Engine) SetPaused(ctx context.Context, queue string, paused bool, now time.Time) (all bool, err error) {
	err = e.write(ctx, durable, func(tx pgx.Tx) error {
		var err error
		switch {
		case paused:
			_, err = tx.Exec(ctx, `INSERT INTO paused_queues (queue, paused_at) VALUES ($1, $2)
				ON CONFLICT (queue) DO NOTHING`, queue, now.UnixNano())
		case queue == claim.AllQueues:
			_, err = tx.Exec(ctx, "DELETE FROM paused_queues")
		default:
			_, err = tx.Exec(ctx, "DELETE FROM paused_queues WHERE queue = $1", queue)
		}
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM paused_queues WHERE queue = '*')").Scan(&all); err != nil {
			return err
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return false, fmt.Errorf("pause or resume %s: %w", queue, err)
	}
	return all, nil
}

// Paused lists paused_queues.
func (e *Engine) Paused(ctx context.Context) ([]string, error) {
	out, err := queryAll(ctx, e, "list paused queues", claim.ScanValue[string], "SELECT queue FROM paused_queues ORDER BY queue")
	if out == nil && err == nil {
		out = []string{} // none is an empty list, not nil
	}
	return out, err
}

// restartRound restarts the jobs in p.State that no dependency keeps from
// running now (unmetNow) and whose unique_key is free (the oldest of several
// sharing one).
func restartRound(ctx context.Context, tx pgx.Tx, p claim.RestartParams) ([]claim.Job, error) {
	rows, err := tx.Query(ctx, `WITH done AS (
			SELECT seq, unique_key FROM jobs WHERE state = $2 AND NOT`+unmetNow+` ORDER BY seq FOR UPDATE OF jobs),
		free AS (
			SELECT DISTINCT ON (d.unique_key, CASE WHEN d.unique_key IS NULL THEN d.seq END) d.seq
			FROM done d
			WHERE d.unique_key IS NULL OR NOT EXISTS (
				SELECT 1 FROM jobs l WHERE l.unique_key = d.unique_key
				AND l.state IN ('pending', 'processing', 'failed', 'held'))
			ORDER BY d.unique_key, CASE WHEN d.unique_key IS NULL THEN d.seq END, d.seq)
		UPDATE jobs`+restartSet+` FROM free WHERE jobs.seq = free.seq
		RETURNING `+jobColumnsQualified, p.Now.UnixNano(), string(p.State))
	return collectJobs(rows, err)
}

// rewait makes the jobs that counted id as completed, and have not started
// yet, wait for it again: its restart is a new run they must wait for. It
// returns their ids.
func rewait(ctx context.Context, tx pgx.Tx, id string) ([]string, error) {
	rows, err := tx.Query(ctx, `WITH unmet AS (
			UPDATE deps SET met = false FROM jobs j
			WHERE deps.after_id = $1 AND deps.met AND j.id = deps.job_id AND j.state IN ('pending', 'held')
			RETURNING deps.job_id)
		UPDATE jobs SET waiting = waiting + 1 FROM unmet WHERE jobs.id = unmet.job_id RETURNING jobs.id`, id)
	if err != nil {
		return nil, fmt.Errorf("make the dependents of %s wait again: %w", id, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("make the dependents of %s wait again: %w", id, err)
	}
	slices.Sort(ids)
	return ids, nil
}

// collectJobs scans the rows of a statement RETURNING jobColumns.
func collectJobs(rows pgx.Rows, err error) ([]claim.Job, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return claim.Collect(rows, claim.ScanJob)
}

// changeOrRead runs update, an UPDATE … RETURNING of job id, and notifies
// the workers when it changed the job; when it changed no row, it reads the
// job as it is (claim.ErrNotFound when there is none).
func (e *Engine) changeOrRead(ctx context.Context, tx pgx.Tx, id, update string, args ...any) (claim.Job, bool, error) {
	j, err := claim.ScanJob(tx.QueryRow(ctx, update, args...))
	if err == nil {
		return j, true, e.notify(ctx, tx)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return j, false, err
	}
	j, err = claim.ScanJob(tx.QueryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return j, false, claim.NotFoundError(id)
	}
	return j, false, err
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// cancelSet is the one change `cancel` makes to a pending, failed or
// processing job: one that is not running is canceled at once; a running
// one keeps its state and its updated_at (the start of its run, which
// RUNNING FOR counts from) and is marked (cancel_at, the first request kept).
const cancelSet = ` SET
	state = CASE WHEN state = 'processing' THEN state ELSE 'canceled' END,
	cancel_at = coalesce(cancel_at, ?),
	finished_at = CASE WHEN state = 'processing' THEN finished_at ELSE ? END,
	updated_at = CASE WHEN state = 'processing' THEN updated_at ELSE ? END`

const unfinished = ` AND state IN ('pending', 'failed', 'processing', 'held')`

// Cancel is one UPDATE … RETURNING of the job, or a read of it as it is.
func (e *Engine) Cancel(ctx context.Context, p claim.CancelParams) (j claim.Job, changed bool, err error) {
	now := p.Now.UnixNano()
	err = e.tx(ctx, func(tx *sql.Tx) error {
		j, err = claim.ScanJob(tx.QueryRowContext(ctx, "UPDATE jobs"+cancelSet+" WHERE id = ?"+unfinished+" RETURNING "+jobColumns,
			now, now, now, p.ID))
		if changed = err == nil; !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return getIn(ctx, tx, p.ID, &j)
	})
	if err != nil {
		return claim.Job{}, false, fmt.Errorf("cancel job %s: %w", p.ID, err)
	}
	if changed {
		e.notify()
	}
	return j, changed, nil
}

// CancelQueue is Cancel's change to every unfinished job of the queue, in
// one statement.
func (e *Engine) CancelQueue(ctx context.Context, p claim.CancelParams) ([]claim.Job, error) {
	now := p.Now.UnixNano()
	var out []claim.Job
	err := e.tx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = collectJobs(tx.QueryContext(ctx, "UPDATE jobs"+cancelSet+" WHERE queue = ?"+unfinished+" RETURNING "+jobColumns,
			now, now, now, p.Queue))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cancel queue %s: %w", p.Queue, err)
	}
	if len(out) > 0 {
		e.notify()
	}
	return out, nil
}

// CancelRequested reads the worker's marked processing jobs through
// jobs_state: processing jobs are few.
func (e *Engine) CancelRequested(ctx context.Context, workerID string) ([]claim.RunID, error) {
	rows, err := e.query(ctx, nil, `SELECT id, runs FROM jobs INDEXED BY jobs_state
		WHERE state = 'processing' AND worker_id = ? AND cancel_at IS NOT NULL`, workerID)
	if err != nil {
		return nil, fmt.Errorf("look for canceled runs: %w", err)
	}
	out, err := scanRunIDs(rows)
	if err != nil {
		return nil, fmt.Errorf("look for canceled runs: %w", err)
	}
	return out, nil
}

// restartSet is RestartParams' change. A job whose run_at is still ahead
// (canceled before it ran) waits for it again.
const restartSet = ` SET state = 'pending', attempts = 0, lost = 0, run_after = max(?, coalesce(run_at, 0)),
	last_error = NULL, exit_code = NULL, finished_at = NULL, cancel_at = NULL, dead_by = NULL,
	worker_id = NULL, lease_until = NULL, updated_at = ?`

const finished = ` state IN ('completed', 'dead', 'canceled')`

// Restart is one UPDATE … RETURNING; the jobs that died waiting for a
// restarted job wait again (as after a retry).
func (e *Engine) Restart(ctx context.Context, p claim.RestartParams) (jobs []claim.Job, changed bool, r claim.Rearmed, err error) {
	now := p.Now.UnixNano()
	err = e.tx(ctx, func(tx *sql.Tx) error {
		if p.ID == "" {
			// In rounds, as RetryAll: a job waiting for one that stays dead,
			// canceled or removed stays as it is, never pending for ever.
			jobs, err = claim.InRounds(func() ([]claim.Job, error) {
				return collectJobs(tx.QueryContext(ctx, "UPDATE OR IGNORE jobs"+restartSet+" WHERE state = ? AND NOT"+unmetNow+" RETURNING "+jobColumns,
					now, now, string(p.State)))
			})
		} else {
			var j claim.Job
			j, err = claim.ScanJob(tx.QueryRowContext(ctx, "UPDATE jobs"+restartSet+" WHERE id = ? AND"+finished+" RETURNING "+jobColumns,
				now, now, p.ID))
			switch {
			case isUnique(err):
				h, err := keyHolder(ctx, tx, p.ID)
				if err != nil {
					return err
				}
				return claim.RestartHeldError(p.ID, h)
			case errors.Is(err, sql.ErrNoRows):
				j, err = claim.ScanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ?", p.ID))
				if errors.Is(err, sql.ErrNoRows) {
					return claim.NotFoundError(p.ID)
				}
				jobs = []claim.Job{j}
				return err
			}
			jobs = []claim.Job{j}
		}
		if err != nil {
			return err
		}
		if p.ID != "" {
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
		return nil
	})
	if err != nil {
		return nil, false, claim.Rearmed{}, fmt.Errorf("restart: %w", err)
	}
	if changed && len(jobs) > 0 {
		e.notify()
	}
	return jobs, changed, r, nil
}

// rewait makes the jobs that counted id as completed, and have not started
// yet, wait for it again: its restart is a new run they must wait for. It
// returns their ids.
func rewait(ctx context.Context, tx *sql.Tx, id string) ([]string, error) {
	ids, err := queryIDs(ctx, tx, `UPDATE jobs SET waiting = waiting + 1
		WHERE state IN ('pending', 'held') AND id IN (SELECT job_id FROM deps WHERE after_id = ? AND met = 1)
		RETURNING id`, id)
	if err != nil {
		return nil, fmt.Errorf("make the dependents of %s wait again: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE deps SET met = 0
		WHERE after_id = ? AND met = 1 AND job_id IN (SELECT id FROM jobs WHERE state IN ('pending', 'held'))`, id); err != nil {
		return nil, fmt.Errorf("make the dependents of %s wait again: %w", id, err)
	}
	slices.Sort(ids)
	return ids, nil
}

// Remove deletes a finished job; its runs go with it (ON DELETE CASCADE).
func (e *Engine) Remove(ctx context.Context, id string) (claim.State, error) {
	var st claim.State
	err := e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM jobs WHERE id = ? AND"+finished, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return refuseWaitedFor(ctx, tx, id)
		}
		err = tx.QueryRowContext(ctx, "SELECT state FROM jobs WHERE id = ?", id).Scan(&st)
		if errors.Is(err, sql.ErrNoRows) {
			return claim.NotFoundError(id)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("remove job %s: %w", id, err)
	}
	return st, nil
}

// SetPaused inserts or deletes the queue's row of paused_queues.
func (e *Engine) SetPaused(ctx context.Context, queue string, paused bool, now time.Time) (all bool, err error) {
	err = e.tx(ctx, func(tx *sql.Tx) error {
		var err error
		switch {
		case paused:
			_, err = tx.ExecContext(ctx, `INSERT INTO paused_queues (queue, paused_at) VALUES (?, ?)
				ON CONFLICT (queue) DO NOTHING`, queue, now.UnixNano())
		case queue == claim.AllQueues:
			_, err = tx.ExecContext(ctx, "DELETE FROM paused_queues")
		default:
			_, err = tx.ExecContext(ctx, "DELETE FROM paused_queues WHERE queue = ?", queue)
		}
		if err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM paused_queues WHERE queue = '*')").Scan(&all)
	})
	if err != nil {
		return false, fmt.Errorf("pause or resume %s: %w", queue, err)
	}
	e.notify()
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

// collectJobs scans the rows of a statement RETURNING jobColumns.
func collectJobs(rows *sql.Rows, err error) ([]claim.Job, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return claim.Collect(rows, claim.ScanJob)
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Retry re-drives a dead job.
func (e *Engine) Retry(ctx context.Context, id string, now time.Time) (claim.Job, error) {
	var j claim.Job
	err := e.tx(ctx, func(tx *sql.Tx) (err error) {
		j, err = e.retry(ctx, tx, id, now)
		return err
	})
	if err == nil {
		e.notify()
	}
	return j, err
}

// RetryAll re-drives every dead job whose unique_key is free: UPDATE OR
// IGNORE skips a row the unique index refuses.
func (e *Engine) RetryAll(ctx context.Context, now time.Time) ([]claim.Job, error) {
	var out []claim.Job
	err := e.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "UPDATE OR IGNORE jobs"+retrySet+" WHERE state = 'dead' RETURNING "+jobColumns, now.UnixNano(), now.UnixNano())
		if err != nil {
			return fmt.Errorf("retry dead jobs: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				return fmt.Errorf("retry dead jobs: %w", err)
			}
			out = append(out, j)
		}
		return rows.Err()
	})
	if err == nil && len(out) > 0 {
		e.notify()
	}
	return out, err
}

const retrySet = ` SET state = 'pending', attempts = 0, lost = 0, run_after = ?,
	last_error = NULL, exit_code = NULL, finished_at = NULL, updated_at = ?`

func (e *Engine) retry(ctx context.Context, tx *sql.Tx, id string, now time.Time) (claim.Job, error) {
	j, err := scanJob(tx.QueryRowContext(ctx, "UPDATE jobs"+retrySet+" WHERE id = ? AND state = 'dead' RETURNING "+jobColumns, now.UnixNano(), now.UnixNano(), id))
	if err == nil {
		return j, nil
	}
	if isUnique(err) {
		return claim.Job{}, claim.HeldKeyError(id)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return claim.Job{}, fmt.Errorf("retry job %s: %w", id, err)
	}
	return claim.Job{}, notDead(ctx, tx, id)
}

// notDead explains why a job that should be dead could not be acted on.
func notDead(ctx context.Context, tx *sql.Tx, id string) error {
	var state string
	err := tx.QueryRowContext(ctx, "SELECT state FROM jobs WHERE id = ?", id).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return claim.NotDeadError(id, "")
	}
	if err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	return claim.NotDeadError(id, claim.State(state))
}

// Purge deletes the dead job id and its runs.
func (e *Engine) Purge(ctx context.Context, id string) error {
	return e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM jobs WHERE id = ? AND state = 'dead'", id)
		if err != nil {
			return fmt.Errorf("purge job %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notDead(ctx, tx, id)
		}
		return nil
	})
}

// PurgeFinished deletes jobs in state that finished before cutoff.
func (e *Engine) PurgeFinished(ctx context.Context, state claim.State, cutoff time.Time) ([]string, error) {
	var ids []string
	err := e.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `DELETE FROM jobs WHERE state = ? AND finished_at < ? RETURNING id`,
			string(state), cutoff.UnixNano())
		if err != nil {
			return fmt.Errorf("purge jobs: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("purge jobs: %w", err)
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	return ids, err
}

// HeldDead lists the dead jobs whose unique_key a live job holds.
func (e *Engine) HeldDead(ctx context.Context) ([]claim.Job, error) {
	return e.queryJobs(ctx, "SELECT "+jobColumns+` FROM jobs AS d
		WHERE d.state = 'dead' AND d.unique_key IS NOT NULL AND EXISTS (
			SELECT 1 FROM jobs AS l WHERE l.unique_key = d.unique_key
			AND l.state IN ('pending', 'processing', 'failed'))
		ORDER BY d.seq`)
}

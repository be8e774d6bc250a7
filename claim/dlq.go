package claim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Retry re-drives a dead job: pending now, attempts and lost runs back to 0.
// Earlier runs stay in its history, and new runs number on from them so no
// log is overwritten. Errors: ErrNotFound, ErrConflict (not dead).
func (s *Store) Retry(ctx context.Context, id string) (Job, error) {
	var j Job
	err := s.tx(ctx, func(tx *sql.Tx) (err error) {
		j, err = s.retry(ctx, tx, id)
		return err
	})
	if err == nil {
		s.notify()
	}
	return j, err
}

// RetryAll re-drives every dead job and returns them. A dead job whose
// unique_key another live job holds stays dead (retrying it would be the
// conflict Retry reports), and so does all but the oldest of several dead
// jobs that share a unique_key.
func (s *Store) RetryAll(ctx context.Context) ([]Job, error) {
	var out []Job
	err := s.tx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		rows, err := tx.QueryContext(ctx, "UPDATE OR IGNORE jobs"+retrySet+" WHERE state = 'dead' RETURNING "+jobColumns, now, now)
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
		s.notify()
	}
	return out, err
}

const retrySet = ` SET state = 'pending', attempts = 0, lost = 0, run_after = ?,
	last_error = NULL, exit_code = NULL, finished_at = NULL, updated_at = ?`

func (s *Store) retry(ctx context.Context, tx *sql.Tx, id string) (Job, error) {
	now := s.now()
	j, err := scanJob(tx.QueryRowContext(ctx, "UPDATE jobs"+retrySet+" WHERE id = ? AND state = 'dead' RETURNING "+jobColumns, now, now, id))
	if err == nil {
		return j, nil
	}
	if isUnique(err) {
		return Job{}, fmt.Errorf("%w: job %s has the unique_key of a job still pending, processing or failed; retry it once that job is done", ErrConflict, id)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Job{}, fmt.Errorf("retry job %s: %w", id, err)
	}
	return Job{}, s.notDead(ctx, tx, id)
}

// notDead explains why a job that should be dead could not be acted on.
func (s *Store) notDead(ctx context.Context, tx *sql.Tx, id string) error {
	var state string
	err := tx.QueryRowContext(ctx, "SELECT state FROM jobs WHERE id = ?", id).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	return fmt.Errorf("%w: job %s is %s, not dead", ErrConflict, id, state)
}

// Purge deletes the dead job id and its runs. Errors: ErrNotFound,
// ErrConflict (not dead).
func (s *Store) Purge(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM jobs WHERE id = ? AND state = 'dead'", id)
		if err != nil {
			return fmt.Errorf("purge job %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return s.notDead(ctx, tx, id)
		}
		return nil
	})
}

// PurgeFinished deletes jobs in state (completed or dead) that finished
// before cutoff, with their runs, and returns their ids so the caller can
// remove their logs.
func (s *Store) PurgeFinished(ctx context.Context, state State, cutoff time.Time) ([]string, error) {
	if state != Completed && state != Dead {
		return nil, invalidf("purge takes --state completed or dead, not %s: other jobs are not finished", state)
	}
	var ids []string
	err := s.tx(ctx, func(tx *sql.Tx) error {
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

// HeldDead returns the dead jobs that Retry would refuse with ErrConflict
// right now, because a pending, processing or failed job holds their
// unique_key: after RetryAll, the ones it left dead. Oldest first.
func (s *Store) HeldDead(ctx context.Context) ([]Job, error) {
	return s.queryJobs(ctx, "SELECT "+jobColumns+` FROM jobs AS d
		WHERE d.state = 'dead' AND d.unique_key IS NOT NULL AND EXISTS (
			SELECT 1 FROM jobs AS l WHERE l.unique_key = d.unique_key
			AND l.state IN ('pending', 'processing', 'failed'))
		ORDER BY d.seq`)
}

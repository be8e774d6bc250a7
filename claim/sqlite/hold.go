package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/jobs"
)

// holdSet and releaseSet are SetHeld's changes; the claim reads only
// pending and failed jobs, so a held one is skipped in the claim's own
// statement.
const (
	holdSet    = ` SET held_from = state, state = 'held', updated_at = ? WHERE id = ? AND state IN ('pending', 'failed')`
	releaseSet = ` SET state = coalesce(held_from, 'pending'), held_from = NULL, updated_at = ? WHERE id = ? AND state = 'held'`
)

// SetHeld is one UPDATE … RETURNING of the job, or a read of it as it is.
func (e *Engine) SetHeld(ctx context.Context, p claim.HoldParams) (j claim.Job, changed bool, err error) {
	set := releaseSet
	if p.Held {
		set = holdSet
	}
	err = e.tx(ctx, func(tx *sql.Tx) error {
		j, err = claim.ScanJob(tx.QueryRowContext(ctx, "UPDATE jobs"+set+" RETURNING "+jobColumns, p.Now.UnixNano(), p.ID))
		if changed = err == nil; !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return getIn(ctx, tx, p.ID, &j)
	})
	if err != nil {
		return claim.Job{}, false, fmt.Errorf("hold or release job %s: %w", p.ID, err)
	}
	if changed {
		e.notify()
	}
	return j, changed, nil
}

// getIn reads job id in tx into j; ErrNotFound when there is none.
func getIn(ctx context.Context, tx *sql.Tx, id string, j *claim.Job) error {
	var err error
	*j, err = claim.ScanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return claim.NotFoundError(id)
	}
	return err
}

// Edit is one conditional UPDATE … RETURNING.
func (e *Engine) Edit(ctx context.Context, p claim.EditParams) (j claim.Job, changed bool, err error) {
	nj := p.Job
	var env sql.NullString
	if len(nj.Env) > 0 {
		b, _ := json.Marshal(jobs.EscapeEnv(nj.Env))
		env = sql.NullString{String: string(b), Valid: true}
	}
	err = e.tx(ctx, func(tx *sql.Tx) error {
		j, err = claim.ScanJob(tx.QueryRowContext(ctx, `UPDATE jobs SET command = ?, priority = ?, queue = ?,
			run_at = ?, run_after = ?, env = ?, max_retries = ?, label = ?, updated_at = ?
			WHERE id = ? AND state IN ('pending', 'held') AND updated_at = ? RETURNING `+jobColumns,
			nj.Command, nj.Priority, nj.Queue, claim.Nanos(nj.RunAt), nj.RunAfter.UnixNano(), env, nj.MaxRetries,
			claim.NullString(nj.Label), p.Now.UnixNano(), nj.ID, p.Was.UnixNano()))
		changed = err == nil
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return claim.Job{}, false, fmt.Errorf("edit job %s: %w", nj.ID, err)
	}
	if changed {
		e.notify()
	}
	return j, changed, nil
}

// PendingCounts reads each queue's pending jobs from queue_counts, and
// counts its scheduled and waiting ones through their indexes
// (migration13.sql): one statement, so one snapshot.
func (e *Engine) PendingCounts(ctx context.Context, now time.Time) ([]claim.QueuePending, error) {
	return queryAll(ctx, e, "count pending jobs", claim.ScanQueuePending, `SELECT c.queue, c.n,
		(SELECT count(*) FROM jobs INDEXED BY jobs_pending_at
			WHERE state = 'pending' AND queue = c.queue AND run_after > ?1),
		(SELECT count(*) FROM jobs INDEXED BY jobs_pending_waiting
			WHERE state = 'pending' AND waiting > 0 AND queue = c.queue AND run_after <= ?1)
		FROM queue_counts c WHERE c.state = 'pending' AND c.n > 0`, now.UnixNano())
}

// ScaleWorkers sets the slots of the workers not stopping.
func (e *Engine) ScaleWorkers(ctx context.Context, n int) (int, error) {
	var changed int64
	err := e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE workers SET slots = ? WHERE stopping = 0", n)
		if err == nil {
			changed, _ = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("scale workers: %w", err)
	}
	e.notify()
	return int(changed), nil
}

// ScaledTo records the slots worker id claims with.
func (e *Engine) ScaledTo(ctx context.Context, id string, n int) error {
	err := e.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE workers SET slots_applied = ? WHERE id = ?", n, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("record worker %s scaled: %w", id, err)
	}
	e.notify()
	return nil
}

// WorkerSlots reads worker id's slots.
func (e *Engine) WorkerSlots(ctx context.Context, id string) (int, error) {
	var n int
	err := e.queryRow(ctx, nil, "SELECT slots FROM workers WHERE id = ?", id).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%w: worker %s", claim.ErrNotFound, id)
	}
	if err != nil {
		return 0, fmt.Errorf("read worker %s: %w", id, err)
	}
	return n, nil
}

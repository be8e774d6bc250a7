package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/jobs"
)

// holdSet and releaseSet are SetHeld's changes ($1 now, $2 id). Under READ
// COMMITTED a row a claim holds is re-read once it is free, so a job
// claimed meanwhile is processing and neither matches.
const (
	holdSet    = ` SET held_from = state, state = 'held', updated_at = $1 WHERE id = $2 AND state IN ('pending', 'failed')`
	releaseSet = ` SET state = coalesce(held_from, 'pending'), held_from = NULL, updated_at = $1 WHERE id = $2 AND state = 'held'`
)

// SetHeld is one UPDATE … RETURNING of the job, or a read of it as it is.
func (e *Engine) SetHeld(ctx context.Context, p claim.HoldParams) (j claim.Job, changed bool, err error) {
	set := releaseSet
	if p.Held {
		set = holdSet
	}
	err = e.write(ctx, durable, func(tx pgx.Tx) error {
		j, changed, err = e.changeOrRead(ctx, tx, p.ID, "UPDATE jobs"+set+" RETURNING "+jobColumns, p.Now.UnixNano(), p.ID)
		return err
	})
	if err != nil {
		return claim.Job{}, false, fmt.Errorf("hold or release job %s: %w", p.ID, err)
	}
	return j, changed, nil
}

// Edit is one conditional UPDATE … RETURNING; a claim that holds the row
// commits first, and the edit then finds it processing.
func (e *Engine) Edit(ctx context.Context, p claim.EditParams) (j claim.Job, changed bool, err error) {
	nj := p.Job
	var env *string
	if len(nj.Env) > 0 {
		b, _ := json.Marshal(jobs.EscapeEnv(nj.Env))
		env = ptr(string(b))
	}
	err = e.write(ctx, durable, func(tx pgx.Tx) error {
		j, err = claim.ScanJob(tx.QueryRow(ctx, `UPDATE jobs SET command = $1, priority = $2, queue = $3,
			run_at = $4, run_after = $5, env = $6, max_retries = $7, label = $8, updated_at = $9
			WHERE id = $10 AND state IN ('pending', 'held') AND updated_at = $11 RETURNING `+jobColumns,
			nj.Command, nj.Priority, nj.Queue, claim.Nanos(nj.RunAt), nj.RunAfter.UnixNano(), env, nj.MaxRetries,
			optional(nj.Label), p.Now.UnixNano(), nj.ID, p.Was.UnixNano()))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		changed = true
		return e.notify(ctx, tx)
	})
	if err != nil {
		return claim.Job{}, false, fmt.Errorf("edit job %s: %w", nj.ID, err)
	}
	return j, changed, nil
}

// PendingCounts reads each queue's pending jobs from queue_counts, and
// counts its scheduled and waiting ones through their indexes
// (migration6.sql): one statement, so one snapshot.
func (e *Engine) PendingCounts(ctx context.Context, now time.Time) ([]claim.QueuePending, error) {
	return queryAll(ctx, e, "count pending jobs", claim.ScanQueuePending, `WITH c AS (SELECT queue, sum(n) AS n FROM queue_counts
			WHERE state = 'pending' GROUP BY queue HAVING sum(n) > 0)
		SELECT c.queue, c.n,
		(SELECT count(*) FROM jobs WHERE state = 'pending' AND queue = c.queue AND run_after > $1),
		(SELECT count(*) FROM jobs WHERE state = 'pending' AND waiting > 0 AND queue = c.queue AND run_after <= $1)
		FROM c`, now.UnixNano())
}

// ScaleWorkers sets the slots of the workers not stopping.
func (e *Engine) ScaleWorkers(ctx context.Context, n int) (int, error) {
	var changed int64
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "UPDATE workers SET slots = $1 WHERE NOT stopping", n)
		if err != nil {
			return err
		}
		changed = tag.RowsAffected()
		return e.notify(ctx, tx)
	})
	if err != nil {
		return 0, fmt.Errorf("scale workers: %w", err)
	}
	return int(changed), nil
}

// ScaledTo records the slots worker id claims with.
func (e *Engine) ScaledTo(ctx context.Context, id string, n int) error {
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "UPDATE workers SET slots_applied = $1 WHERE id = $2", n, id); err != nil {
			return err
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("record worker %s scaled: %w", id, err)
	}
	return nil
}

// WorkerSlots reads worker id's slots.
func (e *Engine) WorkerSlots(ctx context.Context, id string) (int, error) {
	var n int
	err := e.pool.QueryRow(ctx, "SELECT slots FROM workers WHERE id = $1", id).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("%w: worker %s", claim.ErrNotFound, id)
	}
	if err != nil {
		return 0, classify(fmt.Errorf("read worker %s: %w", id, err))
	}
	return n, nil
}

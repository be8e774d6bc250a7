package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// SetQueueLimit inserts or changes a queue's limit, and wakes the workers.
func (e *Engine) SetQueueLimit(ctx context.Context, queue string, maxRunning int, now time.Time) error {
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO queue_limits (queue, max_running, updated_at) VALUES ($1, $2, $3)
			ON CONFLICT (queue) DO UPDATE SET max_running = excluded.max_running, updated_at = excluded.updated_at`,
			queue, maxRunning, now.UnixNano())
		if err != nil {
			return err
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("set queue %s: %w", queue, err)
	}
	return nil
}

// RemoveQueue deletes a queue's settings.
func (e *Engine) RemoveQueue(ctx context.Context, queue string) (bool, error) {
	var n int64
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM queue_limits WHERE queue = $1", queue)
		if err != nil {
			return err
		}
		if n = tag.RowsAffected(); n > 0 {
			return e.notify(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("remove queue %s: %w", queue, err)
	}
	return n > 0, nil
}

// Queues lists the queues with settings and their processing counts.
func (e *Engine) Queues(ctx context.Context) ([]claim.Queue, error) {
	out, err := queryAll(ctx, e, "list queues", claim.ScanQueue, `SELECT l.queue, l.max_running, l.updated_at,
			(SELECT coalesce(sum(c.n), 0) FROM queue_counts c WHERE c.queue = l.queue AND c.state = 'processing')
		FROM queue_limits l ORDER BY l.queue`)
	if out == nil && err == nil {
		out = []claim.Queue{} // none is an empty list, not nil
	}
	return out, err
}

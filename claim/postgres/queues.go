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

// DueSince reads the head of each queue's claim order among the jobs due
// at now: the queues from queue_counts, one probe of jobs_queue_runnable
// each.
func (e *Engine) DueSince(ctx context.Context, now time.Time) (map[string]time.Time, error) {
	dues, err := queryAll(ctx, e, "read due jobs", claim.ScanQueueDue, `SELECT q.queue, (SELECT j.run_after FROM jobs j
		WHERE j.queue = q.queue AND j.state IN ('pending', 'failed') AND j.waiting = 0 AND j.run_after <= $1
		ORDER BY j.priority DESC, j.run_after, j.seq LIMIT 1)
		FROM (SELECT queue FROM queue_counts WHERE state IN ('pending', 'failed')
		GROUP BY queue HAVING sum(n) > 0) q`, now.UnixNano())
	return claim.DueMap(dues), err
}

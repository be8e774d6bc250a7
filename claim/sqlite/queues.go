package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// underLimit is the claim's condition that a job's queue has room: fewer of
// its jobs processing than its limit. It is part of the claim statement, in
// the claim's BEGIN IMMEDIATE transaction, and queue_counts is kept by
// triggers in the transactions that change a job's state, so the count is
// exact when the claim reads it: two claims never both take a queue's last
// slot, and a run that ends (completed, failed, recovered after its worker
// was lost) frees its slot in the same commit. The subquery does not depend
// on the row, so SQLite evaluates it once per claim.
const underLimit = `
		AND queue NOT IN (SELECT l.queue FROM queue_limits l
			JOIN queue_counts c ON c.queue = l.queue AND c.state = 'processing'
			WHERE l.max_running > 0 AND c.n >= l.max_running)`

// SetQueueLimit inserts or changes a queue's limit.
func (e *Engine) SetQueueLimit(ctx context.Context, queue string, maxRunning int, now time.Time) error {
	err := e.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO queue_limits (queue, max_running, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (queue) DO UPDATE SET max_running = excluded.max_running, updated_at = excluded.updated_at`,
			queue, maxRunning, now.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("set queue %s: %w", queue, err)
	}
	e.notify()
	return nil
}

// RemoveQueue deletes a queue's settings.
func (e *Engine) RemoveQueue(ctx context.Context, queue string) (bool, error) {
	var n int64
	err := e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM queue_limits WHERE queue = ?", queue)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("remove queue %s: %w", queue, err)
	}
	if n > 0 {
		e.notify()
	}
	return n > 0, nil
}

// Queues lists the queues with settings and their processing counts.
func (e *Engine) Queues(ctx context.Context) ([]claim.Queue, error) {
	out, err := queryAll(ctx, e, "list queues", claim.ScanQueue, `SELECT l.queue, l.max_running, l.updated_at, coalesce(c.n, 0)
		FROM queue_limits l LEFT JOIN queue_counts c ON c.queue = l.queue AND c.state = 'processing'
		ORDER BY l.queue`)
	if out == nil && err == nil {
		out = []claim.Queue{} // none is an empty list, not nil
	}
	return out, err
}

const dueSinceQuery = `SELECT q.queue, (SELECT j.run_after FROM jobs j INDEXED BY jobs_queue_runnable
	WHERE j.queue = q.queue AND j.state IN ('pending', 'failed') AND j.waiting = 0 AND j.run_after <= ?
	ORDER BY j.priority DESC, j.run_after, j.seq LIMIT 1)
	FROM (SELECT DISTINCT queue FROM queue_counts WHERE state IN ('pending', 'failed') AND n > 0) q`

// DueSince reads the head of each queue's claim order among the jobs due
// at now: the queues from queue_counts, one probe of jobs_queue_runnable
// each.
func (e *Engine) DueSince(ctx context.Context, now time.Time) (map[string]time.Time, error) {
	dues, err := queryAll(ctx, e, "read due jobs", claim.ScanQueueDue, dueSinceQuery, now.UnixNano())
	return claim.DueMap(dues), err
}

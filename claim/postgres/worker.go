package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// RegisterWorker adds a worker process to the registry, durably: a row a
// crash of the server took back would hide a live worker from `worker
// stop` and status.
func (e *Engine) RegisterWorker(ctx context.Context, w claim.WorkerInfo) error {
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO workers (id, host, pid, slots, queues, started_at, heartbeat_at,
			lease_ns, heartbeat_ns, pid_start, slots_applied) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $4)`, w.ID, w.Host,
			w.PID, w.Slots, strings.Join(w.Queues, ","), w.StartedAt.UnixNano(), w.HeartbeatAt.UnixNano(), int64(w.Lease),
			int64(w.HeartbeatInterval), int64(w.PIDStart))
		return err
	})
	if err != nil {
		return fmt.Errorf("register worker: %w", err)
	}
	return nil
}

// RemoveWorker deletes a worker from the registry and wakes the waiters
// (`worker stop --wait`).
func (e *Engine) RemoveWorker(ctx context.Context, id string) error {
	err := e.write(ctx, light, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM workers WHERE id = $1", id); err != nil {
			return err
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("remove worker: %w", err)
	}
	return nil
}

// Workers lists the registry, oldest first, each with the server's start
// (claim.WorkerInfo.SilentSince).
func (e *Engine) Workers(ctx context.Context) ([]claim.WorkerInfo, error) {
	return queryAll(ctx, e, "list workers", claim.ScanWorker, `SELECT id, host, pid, slots, queues, started_at,
		heartbeat_at, stopping, lease_ns, heartbeat_ns, pid_start, slots_applied,
		(extract(epoch FROM pg_postmaster_start_time()) * 1000000000)::bigint FROM workers ORDER BY started_at`)
}

// RequestStop sets every worker's stop flag and wakes them, on every host.
func (e *Engine) RequestStop(ctx context.Context) (int, error) {
	var n int64
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "UPDATE workers SET stopping = true")
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		return e.notify(ctx, tx)
	})
	if err != nil {
		return 0, fmt.Errorf("request stop: %w", err)
	}
	return int(n), nil
}

// StopRequested reads worker id's stop flag.
func (e *Engine) StopRequested(ctx context.Context, id string) (bool, error) {
	var stopping bool
	err := e.pool.QueryRow(ctx, "SELECT stopping FROM workers WHERE id = $1", id).Scan(&stopping)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, classify(fmt.Errorf("read worker %s: %w", id, err))
	}
	return stopping, nil
}

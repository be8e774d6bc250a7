package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/queuectl/queuectl/claim"
)

// RegisterWorker adds a worker process to the registry.
func (e *Engine) RegisterWorker(ctx context.Context, w claim.WorkerInfo) error {
	err := e.write(ctx, light, func(tx *sql.Tx) error {
		_, err := e.exec(ctx, tx, `INSERT INTO workers (id, host, pid, slots, queues, started_at, heartbeat_at,
			lease_ns, heartbeat_ns, pid_start, slots_applied) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.ID, w.Host, w.PID,
			w.Slots, strings.Join(w.Queues, ","), w.StartedAt.UnixNano(), w.HeartbeatAt.UnixNano(), int64(w.Lease),
			int64(w.HeartbeatInterval), int64(w.PIDStart), w.Slots)
		return err
	})
	if err != nil {
		return fmt.Errorf("register worker: %w", err)
	}
	return nil
}

// RemoveWorker deletes a worker from the registry.
func (e *Engine) RemoveWorker(ctx context.Context, id string) error {
	err := e.write(ctx, light, func(tx *sql.Tx) error {
		_, err := e.exec(ctx, tx, "DELETE FROM workers WHERE id = ?", id)
		return err
	})
	if err != nil {
		return fmt.Errorf("remove worker: %w", err)
	}
	e.notify()
	return nil
}

// Workers lists the registry, oldest first.
func (e *Engine) Workers(ctx context.Context) ([]claim.WorkerInfo, error) {
	return queryAll(ctx, e, "list workers", claim.ScanWorker, `SELECT id, host, pid, slots, queues, started_at,
		heartbeat_at, stopping, lease_ns, heartbeat_ns, pid_start, slots_applied, 0 FROM workers ORDER BY started_at`)
}

// RequestStop sets every worker's stop flag and wakes them.
func (e *Engine) RequestStop(ctx context.Context) (int, error) {
	var n int64
	err := e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE workers SET stopping = 1")
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("request stop: %w", err)
	}
	e.notify()
	return int(n), nil
}

// StopRequested reads worker id's stop flag.
func (e *Engine) StopRequested(ctx context.Context, id string) (bool, error) {
	var stopping bool
	err := e.queryRow(ctx, nil, "SELECT stopping FROM workers WHERE id = ?", id).Scan(&stopping)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read worker %s: %w", id, err)
	}
	return stopping, nil
}

package claim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// WorkerInfo is one `worker start` process in the registry.
type WorkerInfo struct {
	ID          string
	Host        string
	PID         int
	Slots       int
	Queues      []string
	StartedAt   time.Time
	HeartbeatAt time.Time
	Stopping    bool
}

// RegisterWorker adds a worker process to the registry.
func (s *Store) RegisterWorker(ctx context.Context, w WorkerInfo) error {
	now := s.now()
	err := s.write(ctx, light, func(tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO workers (id, host, pid, slots, queues, started_at, heartbeat_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, w.ID, w.Host, w.PID, w.Slots, strings.Join(w.Queues, ","), now, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("register worker: %w", err)
	}
	return nil
}

// RemoveWorker deletes a worker from the registry: on a clean exit, or when
// a reaper finds it gone.
func (s *Store) RemoveWorker(ctx context.Context, id string) error {
	err := s.write(ctx, light, func(tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, "DELETE FROM workers WHERE id = ?", id)
		return err
	})
	if err != nil {
		return fmt.Errorf("remove worker: %w", err)
	}
	s.notify()
	return nil
}

// Workers lists the registry, oldest first. Rows of crashed workers stay
// until a reaper removes them; callers judge liveness by HeartbeatAt.
func (s *Store) Workers(ctx context.Context) ([]WorkerInfo, error) {
	rows, err := s.query(ctx, nil, `SELECT id, host, pid, slots, queues, started_at,
		heartbeat_at, stopping FROM workers ORDER BY started_at`)
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	defer rows.Close()
	var out []WorkerInfo
	for rows.Next() {
		var w WorkerInfo
		var queues string
		var started, beat int64
		if err := rows.Scan(&w.ID, &w.Host, &w.PID, &w.Slots, &queues, &started, &beat, &w.Stopping); err != nil {
			return nil, fmt.Errorf("list workers: %w", err)
		}
		if queues != "" {
			w.Queues = strings.Split(queues, ",")
		}
		w.StartedAt, w.HeartbeatAt = time.Unix(0, started).UTC(), time.Unix(0, beat).UTC()
		out = append(out, w)
	}
	return out, rows.Err()
}

// RequestStop asks every registered worker to stop gracefully and returns
// how many were asked. Workers see the request on their next wake-up.
func (s *Store) RequestStop(ctx context.Context) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE workers SET stopping = 1")
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("request stop: %w", err)
	}
	s.notify()
	return int(n), nil
}

// StopRequested reports whether `worker stop` asked worker id to stop.
func (s *Store) StopRequested(ctx context.Context, id string) (bool, error) {
	var stopping bool
	err := s.queryRow(ctx, nil, "SELECT stopping FROM workers WHERE id = ?", id).Scan(&stopping)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read worker %s: %w", id, err)
	}
	return stopping, nil
}

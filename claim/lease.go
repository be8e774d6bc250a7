package claim

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// InFlight is a processing job's current run, as a reaper sees it.
type InFlight struct {
	Run
	LeaseUntil time.Time
}

// InFlight returns the current run of every processing job.
func (s *Store) InFlight(ctx context.Context) ([]InFlight, error) {
	rows, err := s.query(ctx, nil, `SELECT `+prefixed("r.", runColumns)+`, j.lease_until
		FROM jobs j JOIN runs r ON r.job_id = j.id AND r.attempt = j.runs
		WHERE j.state = 'processing'`)
	if err != nil {
		return nil, fmt.Errorf("list runs in flight: %w", err)
	}
	defer rows.Close()
	var out []InFlight
	for rows.Next() {
		var lease sql.NullInt64
		r, err := scanRun(withExtra{rows, []any{&lease}})
		if err != nil {
			return nil, fmt.Errorf("list runs in flight: %w", err)
		}
		f := InFlight{Run: r, LeaseUntil: fromNanos(lease)}
		out = append(out, f)
	}
	return out, rows.Err()
}

// Renew extends the lease on every job the worker is running, and records
// the worker's heartbeat. It reports whether `worker stop` asked the worker
// to stop.
func (s *Store) Renew(ctx context.Context, workerID string, lease time.Duration) (stopping bool, err error) {
	now := s.now()
	err = s.write(ctx, light, func(tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, `UPDATE jobs SET lease_until = ?
			WHERE worker_id = ? AND state = 'processing'`, now+int64(lease), workerID)
		if err != nil {
			return fmt.Errorf("renew leases: %w", err)
		}
		err = s.queryRow(ctx, tx, `UPDATE workers SET heartbeat_at = ? WHERE id = ?
			RETURNING stopping`, now, workerID).Scan(&stopping)
		if err == sql.ErrNoRows {
			// The row was reaped while this worker stalled; it is alive, so say so again.
			return nil
		}
		return err
	})
	return stopping, err
}

// Recover makes a lost run's job runnable again without counting the lost
// run as a failed attempt; after MaxLost losses the job is dead. Only the
// current run of a processing job can be recovered, so of several reapers
// racing for one run exactly one wins; the others get ErrLost. It returns
// the job's new state.
func (s *Store) Recover(ctx context.Context, f InFlight) (State, error) {
	now := s.now()
	var next State
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := s.queryRow(ctx, tx, `UPDATE jobs SET
				state = CASE WHEN lost + 1 >= ? THEN 'dead' ELSE 'pending' END,
				last_error = CASE WHEN lost + 1 >= ? THEN ? ELSE last_error END,
				finished_at = CASE WHEN lost + 1 >= ? THEN ? END,
				lost = lost + 1, attempts = attempts - 1, run_after = ?,
				worker_id = NULL, lease_until = NULL, updated_at = ?
			WHERE id = ? AND state = 'processing' AND runs = ?
			RETURNING state`,
			MaxLost, MaxLost, fmt.Sprintf("worker lost %d times", MaxLost), MaxLost, now,
			now, now, f.JobID, f.Attempt).Scan(&next)
		if err == sql.ErrNoRows {
			return fmt.Errorf("recover job %s attempt %d: %w", f.JobID, f.Attempt, ErrLost)
		}
		if err != nil {
			return fmt.Errorf("recover job %s: %w", f.JobID, err)
		}
		return s.endRun(ctx, tx, f.JobID, f.Attempt, now, OutcomeLost, nil, "worker lost")
	})
	if err == nil {
		s.notify()
	}
	return next, err
}

func prefixed(prefix, columns string) string {
	out := []byte(prefix)
	for i := 0; i < len(columns); i++ {
		out = append(out, columns[i])
		if columns[i] == ',' {
			for i+1 < len(columns) && (columns[i+1] == ' ' || columns[i+1] == '\n' || columns[i+1] == '\t') {
				i++
			}
			out = append(out, ' ')
			out = append(out, prefix...)
		}
	}
	return string(out)
}

// withExtra scans columns past a row type's own, such as a joined column.
type withExtra struct {
	scanner
	more []any
}

func (w withExtra) Scan(dest ...any) error { return w.scanner.Scan(append(dest, w.more...)...) }

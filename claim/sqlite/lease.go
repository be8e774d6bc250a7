package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/queuectl/queuectl/claim"
)

// InFlight returns the current run of every processing job.
func (e *Engine) InFlight(ctx context.Context) ([]claim.InFlight, error) {
	return queryAll(ctx, e, "list runs in flight", claim.ScanInFlight, `SELECT `+prefixed("r.", runColumns)+`, j.lease_until
		FROM jobs j JOIN runs r ON r.job_id = j.id AND r.attempt = j.runs
		WHERE j.state = 'processing'`)
}

// Renew extends the worker's leases, records its heartbeat, and returns
// the runs it renewed. Light, as a claim is: the store and its workers
// share one host, and what a power cut takes back was acted on by no one.
// A worker whose row is gone is registered again in the same transaction;
// the leases renewed are only those of jobs that still name it.
func (e *Engine) Renew(ctx context.Context, p claim.RenewParams) (claim.Renewal, error) {
	var r claim.Renewal
	w := p.Worker
	err := e.write(ctx, light, func(tx *sql.Tx) error {
		r = claim.Renewal{}
		rows, err := e.query(ctx, tx, `UPDATE jobs SET lease_until = ?
			WHERE worker_id = ? AND state = 'processing' RETURNING id, runs`, p.LeaseUntil.UnixNano(), w.ID)
		if err != nil {
			return fmt.Errorf("renew leases: %w", err)
		}
		if r.Runs, err = scanRunIDs(rows); err != nil {
			return fmt.Errorf("renew leases: %w", err)
		}
		if _, err := schemaVersion(tx.QueryRowContext(ctx, "PRAGMA user_version")); err != nil {
			if !errors.As(err, &r.Newer) {
				return err
			}
		}
		err = e.queryRow(ctx, tx, `UPDATE workers SET heartbeat_at = ? WHERE id = ?
			RETURNING stopping`, p.Now.UnixNano(), w.ID).Scan(&r.Stopping)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, err = e.exec(ctx, tx, `INSERT INTO workers (id, host, pid, slots, queues, started_at, heartbeat_at, stopping,
			lease_ns, heartbeat_ns, pid_start, slots_applied) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.ID, w.Host, w.PID,
			w.Slots, strings.Join(w.Queues, ","), w.StartedAt.UnixNano(), p.Now.UnixNano(), w.Stopping, int64(w.Lease),
			int64(w.HeartbeatInterval), int64(w.PIDStart), w.Slots)
		if err != nil {
			return fmt.Errorf("register worker again: %w", err)
		}
		r.Stopping, r.Registered = w.Stopping, true
		return nil
	})
	return r, err
}

// scanRunIDs reads rows of (job id, attempt) and closes them.
func scanRunIDs(rows *sql.Rows) ([]claim.RunID, error) {
	defer rows.Close()
	return claim.Collect(rows, claim.ScanRunID)
}

// Recover ends a lost run: the job is pending again, or dead once it has
// lost p.MaxLost runs; canceled when `cancel` marked it (its worker died
// stopping it).
func (e *Engine) Recover(ctx context.Context, p claim.RecoverParams) (claim.State, error) {
	now := p.Now.UnixNano()
	var next claim.State
	err := e.tx(ctx, func(tx *sql.Tx) error {
		err := e.queryRow(ctx, tx, `UPDATE jobs SET
				state = CASE WHEN cancel_at IS NOT NULL THEN 'canceled'
					WHEN lost + 1 >= ? THEN 'dead' ELSE 'pending' END,
				last_error = CASE WHEN cancel_at IS NULL AND lost + 1 >= ? THEN ? ELSE last_error END,
				finished_at = CASE WHEN cancel_at IS NOT NULL OR lost + 1 >= ? THEN ? END,
				lost = lost + 1, attempts = attempts - 1, run_after = ?,
				worker_id = NULL, lease_until = NULL, updated_at = ?
			WHERE id = ? AND state = 'processing' AND runs = ?
			RETURNING state`,
			p.MaxLost, p.MaxLost, p.DeadError, p.MaxLost, now,
			now, now, p.JobID, p.Attempt).Scan(&next)
		if err == sql.ErrNoRows {
			return fmt.Errorf("recover job %s attempt %d: %w", p.JobID, p.Attempt, claim.ErrLost)
		}
		if err != nil {
			return fmt.Errorf("recover job %s: %w", p.JobID, err)
		}
		return e.endRun(ctx, tx, claim.Run{JobID: p.JobID, Attempt: p.Attempt, Tails: p.Tails}, p.Now, claim.OutcomeLost, nil, "worker lost")
	})
	if err == nil {
		e.notify()
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

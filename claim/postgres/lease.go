package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// InFlight returns the current run of every processing job.
func (e *Engine) InFlight(ctx context.Context) ([]claim.InFlight, error) {
	return queryAll(ctx, e, "list runs in flight", claim.ScanInFlight, `SELECT `+runColumnsQualified+`, j.lease_until
		FROM jobs j JOIN runs r ON r.job_id = j.id AND r.attempt = j.runs
		WHERE j.state = 'processing'`)
}

// Renew extends the worker's leases and records its heartbeat, in one
// durable transaction of two statements sent together with a read of the
// schema version, and returns the runs it renewed. Durable: the worker
// goes on running the jobs it renewed for a lease on its own clock, which
// a renewal the server's crash took back would cut short for every other
// host. A worker whose row is gone is registered again by the second
// statement; the first renewed only the jobs that still name it, so the
// registration gives it none back.
func (e *Engine) Renew(ctx context.Context, p claim.RenewParams) (claim.Renewal, error) {
	var r claim.Renewal
	w := p.Worker
	err := e.sendDurable(ctx, func(b *pgx.Batch) {
		b.Queue(`UPDATE jobs SET lease_until = $1 WHERE worker_id = $2 AND state = 'processing' RETURNING id, runs`,
			p.LeaseUntil.UnixNano(), w.ID)
		b.Queue(`WITH beat AS (
				UPDATE workers SET heartbeat_at = $1 WHERE id = $2 RETURNING stopping),
			back AS (
				INSERT INTO workers (id, host, pid, slots, queues, started_at, heartbeat_at, stopping, lease_ns, heartbeat_ns,
					pid_start, slots_applied)
				SELECT $2::text, $3::text, $4::integer, $5::integer, $6::text, $7::bigint, $1::bigint, $8::boolean,
					$9::bigint, $10::bigint, $11::bigint, $5::integer
				WHERE NOT EXISTS (SELECT FROM beat)
				RETURNING stopping)
			SELECT stopping, false FROM beat UNION ALL SELECT stopping, true FROM back`,
			p.Now.UnixNano(), w.ID, w.Host, w.PID, w.Slots, strings.Join(w.Queues, ","), w.StartedAt.UnixNano(), w.Stopping,
			int64(w.Lease), int64(w.HeartbeatInterval), int64(w.PIDStart))
		b.Queue(`SELECT version FROM queuectl_schema`)
	}, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("renew leases: %w", err)
		}
		if r.Runs, err = scanRunIDs(rows); err != nil {
			return fmt.Errorf("renew leases: %w", err)
		}
		if err := br.QueryRow().Scan(&r.Stopping, &r.Registered); err != nil {
			return fmt.Errorf("record heartbeat: %w", err)
		}
		var version int
		if err := br.QueryRow().Scan(&version); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if version > len(migrations) {
			r.Newer = &claim.NewerSchemaError{Version: version, Known: len(migrations)}
		}
		return nil
	})
	return r, err
}

// scanRunIDs reads rows of (job id, attempt) and closes them.
func scanRunIDs(rows pgx.Rows) ([]claim.RunID, error) {
	defer rows.Close()
	return claim.Collect(rows, claim.ScanRunID)
}

// recoverLockTimeout bounds how long Recover waits for a row lock.
var recoverLockTimeout = "SET LOCAL lock_timeout = '10s'"

// Recover ends a lost run: the job is pending again, or dead once it has
// lost p.MaxLost runs; the run is closed as lost. One statement.
func (e *Engine) Recover(ctx context.Context, p claim.RecoverParams) (claim.State, error) {
	now := p.Now.UnixNano()
	t := p.Tails.TailColumns()
	var next string
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		// A row lock held elsewhere (an admin's open transaction) must not
		// hold the worker's connection for ever: a worker's pool may be a
		// single connection (claim.WorkerPool). The next pass tries again.
		if _, err := tx.Exec(ctx, recoverLockTimeout); err != nil {
			return fmt.Errorf("recover job %s: %w", p.JobID, err)
		}
		err := tx.QueryRow(ctx, `WITH job AS (
				UPDATE jobs SET
					state = CASE WHEN cancel_at IS NOT NULL THEN 'canceled'
						WHEN lost + 1 >= $1 THEN 'dead' ELSE 'pending' END,
					last_error = CASE WHEN cancel_at IS NULL AND lost + 1 >= $1 THEN $2 ELSE last_error END,
					finished_at = CASE WHEN cancel_at IS NOT NULL OR lost + 1 >= $1 THEN $3::bigint END,
					lost = lost + 1, attempts = attempts - 1, run_after = $3,
					worker_id = NULL, lease_until = NULL, updated_at = $3
				WHERE id = $4 AND state = 'processing' AND runs = $5
				RETURNING id, state),
			run AS (
				UPDATE runs SET ended_at = $3, outcome = $6, error = 'worker lost',
					stdout_size = $8, stderr_size = $9, stdout_tail = $10, stderr_tail = $11
				FROM job WHERE runs.job_id = $4 AND runs.attempt = $5)
			SELECT job.state FROM job, pg_notify($7, '') AS wake`,
			p.MaxLost, p.DeadError, now, p.JobID, p.Attempt, claim.OutcomeLost, e.channel,
			t[0], t[1], t[2], t[3]).Scan(&next)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("recover job %s attempt %d: %w", p.JobID, p.Attempt, claim.ErrLost)
		}
		if err != nil {
			return fmt.Errorf("recover job %s: %w", p.JobID, err)
		}
		return nil
	})
	return claim.State(next), err
}

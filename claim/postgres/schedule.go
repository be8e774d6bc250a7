package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

const scheduleColumns = `s.name, s.cron, s.tz, s.spec, s.paused, s.file, s.next_due, s.last_job,
	s.last_due, s.created_at, s.updated_at, j.state, s.last_skipped, s.skip_reason, s.due_checked`

// Schedules lists every schedule by name, with its last job's state.
func (e *Engine) Schedules(ctx context.Context) ([]claim.Schedule, error) {
	return queryAll(ctx, e, "list schedules", claim.ScanSchedule, `SELECT `+scheduleColumns+`
		FROM schedules s LEFT JOIN jobs j ON j.id = s.last_job ORDER BY s.name`)
}

// Schedule returns one schedule, or ErrNotFound.
func (e *Engine) Schedule(ctx context.Context, name string) (claim.Schedule, error) {
	sc, err := claim.ScanSchedule(e.pool.QueryRow(ctx, `SELECT `+scheduleColumns+`
		FROM schedules s LEFT JOIN jobs j ON j.id = s.last_job WHERE s.name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return claim.Schedule{}, claim.NoSchedule(name)
	}
	if err != nil {
		return claim.Schedule{}, classify(fmt.Errorf("get schedule %s: %w", name, err))
	}
	return sc, nil
}

// InsertSchedule adds a schedule; ErrConflict when the name is taken.
func (e *Engine) InsertSchedule(ctx context.Context, sc claim.Schedule) error {
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO schedules (name, cron, tz, spec, paused, file, next_due,
			created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
			sc.Name, sc.Cron, sc.TZ, sc.Spec, sc.Paused, sc.File, sc.NextDue.UnixNano(),
			sc.CreatedAt.UnixNano(), sc.UpdatedAt.UnixNano())
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: a schedule named %s exists already; remove it first or pick another name", claim.ErrConflict, sc.Name)
		}
		return e.notify(ctx, tx)
	})
	if err != nil && !errors.Is(err, claim.ErrConflict) {
		return fmt.Errorf("add schedule %s: %w", sc.Name, err)
	}
	return err
}

// PutFileSchedule inserts or replaces a file's schedule. A schedule whose
// cron and tz stay keeps the next due time it has in the store, not the
// one sc was read with: a fire or a resume may have moved it since, and
// writing back the old one would fire a due time twice.
func (e *Engine) PutFileSchedule(ctx context.Context, sc claim.Schedule) error {
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO schedules (name, cron, tz, spec, paused, file, next_due,
			created_at, updated_at) VALUES ($1, $2, $3, $4, $5, true, $6, $7, $8)
			ON CONFLICT (name) DO UPDATE SET cron = excluded.cron, tz = excluded.tz, spec = excluded.spec,
				next_due = CASE WHEN schedules.cron = excluded.cron AND schedules.tz = excluded.tz
					THEN schedules.next_due ELSE excluded.next_due END,
				updated_at = excluded.updated_at, due_checked = false
			WHERE schedules.file`,
			sc.Name, sc.Cron, sc.TZ, sc.Spec, sc.Paused, sc.NextDue.UnixNano(), sc.CreatedAt.UnixNano(), sc.UpdatedAt.UnixNano())
		if err != nil {
			return err
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("store schedule %s: %w", sc.Name, err)
	}
	return nil
}

// DeleteSchedule removes a schedule; ErrNotFound when there is none.
func (e *Engine) DeleteSchedule(ctx context.Context, name string) error {
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM schedules WHERE name = $1`, name)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return claim.NoSchedule(name)
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("remove schedule: %w", err)
	}
	return nil
}

// SetSchedulePaused pauses or resumes a schedule, due next at next.
func (e *Engine) SetSchedulePaused(ctx context.Context, name string, paused bool, next, now time.Time) error {
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE schedules SET paused = $1, next_due = $2, updated_at = $3, due_checked = false WHERE name = $4`,
			paused, next.UnixNano(), now.UnixNano(), name)
		if err != nil {
			return err
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("pause schedule %s: %w", name, err)
	}
	return nil
}

// FireSchedule moves the schedule's next due time from p.Due to p.Next
// and enqueues p.Job (unless nil), in one transaction; ok is false (and
// nothing is written) when the schedule is no longer due at p.Due. The
// UPDATE's row lock makes a second worker firing the same due time wait,
// then find next_due moved and change nothing.
func (e *Engine) FireSchedule(ctx context.Context, p claim.FireParams) (r claim.Result, ok bool, err error) {
	err = e.write(ctx, durable, func(tx pgx.Tx) error {
		skipped, reason := p.SkipColumns()
		tag, err := tx.Exec(ctx, `UPDATE schedules SET next_due = $1, last_due = $2, updated_at = $3, due_checked = true,
				last_skipped = coalesce($5::bigint, last_skipped), skip_reason = coalesce($6::text, skip_reason)
			WHERE name = $4 AND next_due = $2 AND NOT paused`,
			p.Next.UnixNano(), p.Due.UnixNano(), p.Now.UnixNano(), p.Name, skipped, reason)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		ok = true
		if p.Job == nil {
			return nil
		}
		rs, err := e.enqueueIn(ctx, tx, claim.EnqueueParams{Jobs: []claim.NewRow{*p.Job}, Each: true, Now: p.Now})
		if err != nil {
			return err
		}
		// A job refused (its id taken, say) is reported for this due time,
		// which passes all the same: retrying it on every tick would only
		// repeat the error.
		if r = rs[0]; r.Err != nil {
			return skipSchedule(ctx, tx, p, claim.SkipRefused)
		}
		if r.Outcome == claim.Skipped {
			if err := skipSchedule(ctx, tx, p, claim.SkipOverlap); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `UPDATE schedules SET last_job = $1 WHERE name = $2`, r.Job.ID, p.Name)
		return err
	})
	if err != nil {
		return claim.Result{}, false, fmt.Errorf("fire schedule %s: %w", p.Name, err)
	}
	return r, ok, nil
}

// skipSchedule records p's due time as skipped for reason, unless p
// records a later one (missed due times) already.
func skipSchedule(ctx context.Context, tx pgx.Tx, p claim.FireParams, reason string) error {
	if !p.Skipped.IsZero() {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE schedules SET last_skipped = $1, skip_reason = $2 WHERE name = $3`,
		p.Due.UnixNano(), reason, p.Name)
	return err
}

// CorrectScheduleDue moves an active schedule's next due time from from to
// to, marking it computed by this worker, only while it is as read (next
// due time from, last written at base, not yet checked); false when not.
func (e *Engine) CorrectScheduleDue(ctx context.Context, name string, from, to, base time.Time) (bool, error) {
	var ok bool
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE schedules SET next_due = $1, due_checked = true
			WHERE name = $2 AND next_due = $3 AND updated_at = $4 AND NOT paused AND NOT due_checked`,
			to.UnixNano(), name, from.UnixNano(), base.UnixNano())
		if err != nil {
			return err
		}
		if ok = tag.RowsAffected() == 1; !ok {
			return nil
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return false, fmt.Errorf("correct schedule %s: %w", name, err)
	}
	return ok, nil
}

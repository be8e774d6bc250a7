package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

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
	sc, err := claim.ScanSchedule(e.queryRow(ctx, nil, `SELECT `+scheduleColumns+`
		FROM schedules s LEFT JOIN jobs j ON j.id = s.last_job WHERE s.name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return claim.Schedule{}, claim.NoSchedule(name)
	}
	if err != nil {
		return claim.Schedule{}, fmt.Errorf("get schedule %s: %w", name, err)
	}
	return sc, nil
}

// InsertSchedule adds a schedule; ErrConflict when the name is taken.
func (e *Engine) InsertSchedule(ctx context.Context, sc claim.Schedule) error {
	err := e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO schedules (name, cron, tz, spec, paused, file, next_due,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			sc.Name, sc.Cron, sc.TZ, sc.Spec, sc.Paused, sc.File, sc.NextDue.UnixNano(),
			sc.CreatedAt.UnixNano(), sc.UpdatedAt.UnixNano())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: a schedule named %s exists already; remove it first or pick another name", claim.ErrConflict, sc.Name)
		}
		return nil
	})
	if errors.Is(err, claim.ErrConflict) {
		return err
	}
	if err != nil {
		return fmt.Errorf("add schedule %s: %w", sc.Name, err)
	}
	e.notify()
	return nil
}

// PutFileSchedule inserts or replaces a file's schedule. A schedule whose
// cron and tz stay keeps the next due time it has in the store, not the
// one sc was read with: a fire or a resume may have moved it since, and
// writing back the old one would fire a due time twice.
func (e *Engine) PutFileSchedule(ctx context.Context, sc claim.Schedule) error {
	err := e.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO schedules (name, cron, tz, spec, paused, file, next_due,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET cron = excluded.cron, tz = excluded.tz, spec = excluded.spec,
				next_due = CASE WHEN schedules.cron = excluded.cron AND schedules.tz = excluded.tz
					THEN schedules.next_due ELSE excluded.next_due END,
				updated_at = excluded.updated_at, due_checked = 0
			WHERE schedules.file = 1`,
			sc.Name, sc.Cron, sc.TZ, sc.Spec, sc.Paused, sc.NextDue.UnixNano(), sc.CreatedAt.UnixNano(), sc.UpdatedAt.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("store schedule %s: %w", sc.Name, err)
	}
	e.notify()
	return nil
}

// DeleteSchedule removes a schedule; ErrNotFound when there is none.
func (e *Engine) DeleteSchedule(ctx context.Context, name string) error {
	err := e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM schedules WHERE name = ?`, name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return claim.NoSchedule(name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove schedule: %w", err)
	}
	e.notify()
	return nil
}

// SetSchedulePaused pauses or resumes a schedule, due next at next.
func (e *Engine) SetSchedulePaused(ctx context.Context, name string, paused bool, next, now time.Time) error {
	err := e.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE schedules SET paused = ?, next_due = ?, updated_at = ?, due_checked = 0 WHERE name = ?`,
			paused, next.UnixNano(), now.UnixNano(), name)
		return err
	})
	if err != nil {
		return fmt.Errorf("pause schedule %s: %w", name, err)
	}
	e.notify()
	return nil
}

// FireSchedule moves the schedule's next due time from p.Due to p.Next
// and enqueues p.Job (unless nil), in one transaction; ok is false (and
// nothing is written) when the schedule is no longer due at p.Due: another
// worker fired it, or it was paused, changed or removed meanwhile.
func (e *Engine) FireSchedule(ctx context.Context, p claim.FireParams) (r claim.Result, ok bool, err error) {
	e.prepare(ctx, insertJob, countPending)
	err = e.tx(ctx, func(tx *sql.Tx) error {
		skipped, reason := p.SkipColumns()
		res, err := tx.ExecContext(ctx, `UPDATE schedules SET next_due = ?, last_due = ?, updated_at = ?, due_checked = 1,
				last_skipped = coalesce(?, last_skipped), skip_reason = coalesce(?, skip_reason)
			WHERE name = ? AND next_due = ? AND paused = 0`,
			p.Next.UnixNano(), p.Due.UnixNano(), p.Now.UnixNano(), skipped, reason, p.Name, p.Due.UnixNano())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		ok = true
		if p.Job == nil {
			return nil
		}
		// A job refused (its id taken, say) is reported for this due time,
		// which passes all the same: retrying it on every tick would only
		// repeat the error.
		if r, err = e.insert(ctx, tx, e.stmt(ctx, tx, insertJob), *p.Job, p.Now); errors.Is(err, claim.ErrInvalid) || errors.Is(err, claim.ErrConflict) {
			r.Err = err
			return e.skipSchedule(ctx, tx, p, claim.SkipRefused)
		} else if err != nil {
			return err
		}
		if r.Outcome == claim.Skipped {
			if err := e.skipSchedule(ctx, tx, p, claim.SkipOverlap); err != nil {
				return err
			}
		}
		if err := e.countCreated(ctx, tx, []claim.Result{r}); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE schedules SET last_job = ? WHERE name = ?`, r.Job.ID, p.Name)
		return err
	})
	if err != nil {
		return claim.Result{}, false, fmt.Errorf("fire schedule %s: %w", p.Name, err)
	}
	if ok {
		e.notify()
	}
	return r, ok, nil
}

// skipSchedule records p's due time as skipped for reason, unless p
// records a later one (missed due times) already.
func (e *Engine) skipSchedule(ctx context.Context, tx *sql.Tx, p claim.FireParams, reason string) error {
	if !p.Skipped.IsZero() {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE schedules SET last_skipped = ?, skip_reason = ? WHERE name = ?`,
		p.Due.UnixNano(), reason, p.Name)
	return err
}

// CorrectScheduleDue moves an active schedule's next due time from from to
// to, marking it computed by this worker, only while it is as read (next
// due time from, last written at base, not yet checked); false when not.
func (e *Engine) CorrectScheduleDue(ctx context.Context, name string, from, to, base time.Time) (bool, error) {
	var ok bool
	err := e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE schedules SET next_due = ?, due_checked = 1
			WHERE name = ? AND next_due = ? AND updated_at = ? AND paused = 0 AND due_checked = 0`,
			to.UnixNano(), name, from.UnixNano(), base.UnixNano())
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		ok = n == 1
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("correct schedule %s: %w", name, err)
	}
	if ok {
		e.notify()
	}
	return ok, nil
}

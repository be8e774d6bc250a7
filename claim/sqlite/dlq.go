package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Retry re-drives a dead job.
func (e *Engine) Retry(ctx context.Context, id string, now time.Time) (claim.Job, claim.Rearmed, error) {
	var j claim.Job
	var r claim.Rearmed
	err := e.tx(ctx, func(tx *sql.Tx) (err error) {
		j, r, err = e.retry(ctx, tx, id, now)
		return err
	})
	if err == nil {
		e.notify()
	}
	return j, r, err
}

// RetryAll re-drives every dead job whose unique_key is free: UPDATE OR
// IGNORE skips a row the unique index refuses. It goes in rounds, down the
// chains of dependencies (unmetNow), until a round re-drives nothing.
func (e *Engine) RetryAll(ctx context.Context, now time.Time) ([]claim.Job, error) {
	var out []claim.Job
	err := e.tx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = claim.InRounds(func() ([]claim.Job, error) {
			round, err := collectJobs(tx.QueryContext(ctx, "UPDATE OR IGNORE jobs"+retrySet+" WHERE state = 'dead' AND NOT"+unmetNow+" RETURNING "+jobColumns, now.UnixNano(), now.UnixNano()))
			if err != nil {
				return nil, fmt.Errorf("retry dead jobs: %w", err)
			}
			return round, nil
		})
		if err != nil {
			return err
		}
		return tellAllKeyHeld(ctx, tx, now)
	})
	if err == nil && len(out) > 0 {
		e.notify()
	}
	return out, err
}

// retrySet re-drives a dead job: as restartSet, a job whose run_at is
// still ahead (a dependent that died before it ran) waits for it again.
const retrySet = ` SET state = 'pending', attempts = 0, lost = 0, run_after = max(?, coalesce(run_at, 0)),
	last_error = NULL, exit_code = NULL, finished_at = NULL, updated_at = ?, dead_by = NULL`

func (e *Engine) retry(ctx context.Context, tx *sql.Tx, id string, now time.Time) (claim.Job, claim.Rearmed, error) {
	j, err := claim.ScanJob(tx.QueryRowContext(ctx, "UPDATE jobs"+retrySet+" WHERE id = ? AND state = 'dead' RETURNING "+jobColumns, now.UnixNano(), now.UnixNano(), id))
	if err == nil {
		r, err := rearm(ctx, tx, id, now)
		if err != nil {
			return claim.Job{}, claim.Rearmed{}, err
		}
		return j, r, refuseBlocked(ctx, tx, id)
	}
	if isUnique(err) {
		h, err := keyHolder(ctx, tx, id)
		if err != nil {
			return claim.Job{}, claim.Rearmed{}, err
		}
		return claim.Job{}, claim.Rearmed{}, claim.HeldKeyError(id, h)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return claim.Job{}, claim.Rearmed{}, fmt.Errorf("retry job %s: %w", id, err)
	}
	return claim.Job{}, claim.Rearmed{}, notDead(ctx, tx, id)
}

// notDead explains why a job that should be dead could not be acted on.
func notDead(ctx context.Context, tx *sql.Tx, id string) error {
	var state string
	err := tx.QueryRowContext(ctx, "SELECT state FROM jobs WHERE id = ?", id).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return claim.NotDeadError(id, "")
	}
	if err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	return claim.NotDeadError(id, claim.State(state))
}

// Purge deletes the dead job id and its runs.
func (e *Engine) Purge(ctx context.Context, id string) error {
	return e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM jobs WHERE id = ? AND state = 'dead'", id)
		if err != nil {
			return fmt.Errorf("purge job %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notDead(ctx, tx, id)
		}
		return refuseWaitedFor(ctx, tx, id)
	})
}

// DropEnv drops the env of the completed and canceled jobs that finished
// before cutoff.
func (e *Engine) DropEnv(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET env = NULL
			WHERE env IS NOT NULL AND state IN ('completed', 'canceled') AND finished_at < ?`, cutoff.UnixNano())
		if err != nil {
			return fmt.Errorf("drop env: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// PurgeFinished deletes jobs in state that finished before cutoff.
func (e *Engine) PurgeFinished(ctx context.Context, state claim.State, cutoff time.Time) ([]string, error) {
	var ids []string
	err := e.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `DELETE FROM jobs WHERE state = ? AND finished_at < ? AND NOT`+waitedFor+` RETURNING id`,
			string(state), cutoff.UnixNano())
		if err != nil {
			return fmt.Errorf("purge jobs: %w", err)
		}
		defer rows.Close()
		if ids, err = claim.Collect(rows, claim.ScanValue[string]); err != nil {
			return fmt.Errorf("purge jobs: %w", err)
		}
		return nil
	})
	return ids, err
}

// BlockedDead lists the dead jobs that wait for a job removed, dead or
// canceled.
func (e *Engine) BlockedDead(ctx context.Context) ([]claim.Job, error) {
	return e.queryJobs(ctx, "SELECT "+jobColumns+" FROM jobs WHERE state = 'dead' AND"+unmetNow+" ORDER BY seq")
}

// HeldDead lists the dead jobs whose unique_key a live job holds.
func (e *Engine) HeldDead(ctx context.Context) ([]claim.Job, error) {
	return e.queryJobs(ctx, "SELECT "+jobColumns+` FROM jobs AS d
		WHERE d.state = 'dead' AND d.unique_key IS NOT NULL AND EXISTS (
			SELECT 1 FROM jobs AS l WHERE l.unique_key = d.unique_key
			AND l.state IN ('pending', 'processing', 'failed', 'held'))
		ORDER BY d.seq`)
}

// rearm re-drives the jobs that id's death made dead, and theirs, down the
// chain. They wait for id again: their count of unmet dependencies never
// changed. One whose unique_key a live job holds stays dead (UPDATE OR
// IGNORE), and so do the jobs below it; it is named in Left.
func rearm(ctx context.Context, tx *sql.Tx, id string, now time.Time) (claim.Rearmed, error) {
	var r claim.Rearmed
	err := claim.WalkDown(id, func(next string) ([]string, error) {
		deps, err := queryIDs(ctx, tx, "UPDATE OR IGNORE jobs"+retrySet+" WHERE dead_by = ? AND state = 'dead' RETURNING id",
			now.UnixNano(), now.UnixNano(), next)
		if err != nil {
			return nil, fmt.Errorf("re-arm the dependents of %s: %w", next, err)
		}
		left, err := queryIDs(ctx, tx, "SELECT id FROM jobs WHERE dead_by = ? AND state = 'dead' ORDER BY seq", next)
		if err != nil {
			return nil, fmt.Errorf("re-arm the dependents of %s: %w", next, err)
		}
		for _, id := range left {
			if err := tellKeyHeld(ctx, tx, id, now); err != nil {
				return nil, fmt.Errorf("re-arm the dependents of %s: %w", next, err)
			}
		}
		r.Waiting = append(r.Waiting, deps...)
		r.Left = append(r.Left, left...)
		return deps, nil
	})
	return r, err
}

// tellAllKeyHeld does what tellKeyHeld does for every dead job whose
// dependency that killed it is alive again: after RetryAll, those it left
// dead because a live job holds their unique_key.
func tellAllKeyHeld(ctx context.Context, tx *sql.Tx, now time.Time) error {
	left, err := queryIDs(ctx, tx, `SELECT d.id FROM jobs AS d JOIN jobs AS p ON p.id = d.dead_by
		WHERE d.state = 'dead' AND p.state NOT IN ('dead', 'canceled') ORDER BY d.seq`)
	if err != nil {
		return fmt.Errorf("find the jobs left dead: %w", err)
	}
	for _, id := range left {
		if err := tellKeyHeld(ctx, tx, id, now); err != nil {
			return err
		}
	}
	return nil
}

// keyHolder finds the live job that holds the unique_key of job id; its ID
// is "" when there is none.
func keyHolder(ctx context.Context, tx *sql.Tx, id string) (claim.KeyHolder, error) {
	var h claim.KeyHolder
	err := tx.QueryRowContext(ctx, `SELECT d.unique_key, l.id, l.state FROM jobs AS d JOIN jobs AS l ON l.unique_key = d.unique_key
		WHERE d.id = ? AND l.id <> d.id AND l.state IN ('pending', 'processing', 'failed', 'held')
		ORDER BY l.seq LIMIT 1`, id).Scan(&h.Key, &h.ID, &h.State)
	if errors.Is(err, sql.ErrNoRows) {
		return claim.KeyHolder{}, nil
	}
	if err != nil {
		return claim.KeyHolder{}, fmt.Errorf("find the holder of the key of %s: %w", id, err)
	}
	return h, nil
}

// tellKeyHeld rewrites the error of id, a dependent rearm leaves dead
// because a live job holds its unique_key, and of the jobs below it: they
// said that a dependency died which is pending again (claim.KeyHeldCause).
func tellKeyHeld(ctx context.Context, tx *sql.Tx, id string, now time.Time) error {
	h, err := keyHolder(ctx, tx, id)
	if err != nil || h.ID == "" {
		return err
	}
	key, holder := h.Key, h.ID
	if _, err := tx.ExecContext(ctx, "UPDATE jobs SET last_error = ?, updated_at = ? WHERE id = ?",
		claim.KeyHeldCause(key, holder), now.UnixNano(), id); err != nil {
		return fmt.Errorf("tell %s its key is held: %w", id, err)
	}
	below := claim.KeyHeldBelow(id, key, holder)
	return claim.WalkDown(id, func(x string) ([]string, error) {
		ids, err := queryIDs(ctx, tx, "UPDATE jobs SET last_error = ?, updated_at = ? WHERE dead_by = ? AND state = 'dead' RETURNING id",
			below.ErrorFor(x), now.UnixNano(), x)
		if err != nil {
			return nil, fmt.Errorf("tell the jobs below %s its key is held: %w", id, err)
		}
		return ids, nil
	})
}

// queryIDs runs query, whose rows are one id each, and collects them.
func queryIDs(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	ids, err := claim.Collect(rows, claim.ScanValue[string])
	if cerr := rows.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	return ids, err
}

// endDependentsQuery makes dead the jobs still waiting for one job, held
// ones too (a hold keeps a job from starting, not from dying with what it
// waits for). It runs each time a job ends dead or canceled, nearly always
// to find no dependent: the jobs are found through the deps key and read
// by id. The unary + keeps SQLite off jobs_state, which without it walks
// every pending job of the store at each death (146 ms each at 195,000
// pending).
const endDependentsQuery = `UPDATE jobs SET state = 'dead', last_error = ?, dead_by = ?,
	finished_at = ?, updated_at = ?
	WHERE id IN (SELECT job_id FROM deps WHERE after_id = ? AND met = 0)
	AND +state IN ('pending', 'held') AND waiting > 0
	RETURNING ` + jobColumns

// EndDependents makes dead the jobs waiting for each p.ID of ps, and
// theirs, in one transaction: the statement is prepared once, and finds
// that most jobs have no dependent in one lookup of the deps key each (a
// transaction each took 10 s for the 15,000 jobs of a cancel --queue).
func (e *Engine) EndDependents(ctx context.Context, ps []claim.EndDependentsParams) ([]claim.Job, error) {
	var out []claim.Job
	e.prepare(ctx, endDependentsQuery)
	err := e.tx(ctx, func(tx *sql.Tx) error {
		stmt := e.stmt(ctx, tx, endDependentsQuery)
		if stmt == nil { // the cache is full
			var err error
			if stmt, err = tx.PrepareContext(ctx, endDependentsQuery); err != nil {
				return fmt.Errorf("end the dependents of %s: %w", ps[0].ID, err)
			}
		}
		defer stmt.Close()
		for _, p := range ps {
			now := p.Now.UnixNano()
			err := claim.WalkDown(p.ID, func(x string) ([]string, error) {
				rows, err := stmt.QueryContext(ctx, p.ErrorFor(x), x, now, now, x)
				if err != nil {
					return nil, fmt.Errorf("end the dependents of %s: %w", x, err)
				}
				jobs, err := claim.Collect(rows, claim.ScanJob)
				if cerr := rows.Close(); err == nil && cerr != nil {
					return nil, cerr
				}
				if err != nil {
					return nil, fmt.Errorf("end the dependents of %s: %w", x, err)
				}
				out = append(out, jobs...)
				return claim.IDs(jobs), nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) > 0 {
		e.notify()
	}
	return out, nil
}

// HookDone appends text to the run's hook results.
func (e *Engine) HookDone(ctx context.Context, r claim.Run, text string) error {
	err := e.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET hooks = CASE WHEN hooks IS NULL THEN ? ELSE hooks || char(10) || ? END
			WHERE job_id = ? AND attempt = ?`, text, text, r.JobID, r.Attempt)
		return err
	})
	if err != nil {
		return fmt.Errorf("record hook of %s: %w", r.JobID, err)
	}
	return nil
}

// EndedDependencies reads every unmet dependency: a start-up cost, never
// a claim's.
func (e *Engine) EndedDependencies(ctx context.Context) ([]claim.EndDependentsParams, error) {
	return queryAll(ctx, e, "find ended dependencies", claim.ScanEnded, `SELECT DISTINCT j.id, j.state FROM deps d JOIN jobs j ON j.id = d.after_id
		WHERE d.met = 0 AND j.state IN ('dead', 'canceled')`)
}

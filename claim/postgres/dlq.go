package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// Retry re-drives a dead job.
func (e *Engine) Retry(ctx context.Context, id string, now time.Time) (claim.Job, claim.Rearmed, error) {
	var j claim.Job
	var r claim.Rearmed
	err := e.write(ctx, durable, func(tx pgx.Tx) (err error) {
		if j, r, err = e.retry(ctx, tx, id, now); err != nil {
			return err
		}
		return e.notify(ctx, tx)
	})
	return j, r, err
}

// retrySet re-drives a dead job ($1: now): as restartSet, a job whose
// run_at is still ahead (a dependent that died before it ran) waits for
// it again.
const retrySet = ` SET state = 'pending', attempts = 0, lost = 0, run_after = greatest($1, coalesce(jobs.run_at, 0)),
	last_error = NULL, exit_code = NULL, finished_at = NULL, updated_at = $1, dead_by = NULL`

// RetryAll re-drives every dead job whose unique_key is free: of several
// dead jobs sharing a free key, the oldest, as SQLite's UPDATE OR IGNORE
// leaves it. The rows are locked first, in seq order, so that the keys
// checked are the keys updated.
func (e *Engine) RetryAll(ctx context.Context, now time.Time) ([]claim.Job, error) {
	var out []claim.Job
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		var err error
		if out, err = claim.InRounds(func() ([]claim.Job, error) { return retryRound(ctx, tx, now) }); err != nil {
			return err
		}
		if err := tellAllKeyHeld(ctx, tx, now); err != nil {
			return err
		}
		if len(out) == 0 {
			return nil
		}
		return e.notify(ctx, tx)
	})
	return out, err
}

// retryRound re-drives the dead jobs that no dependency keeps from running
// now (unmetNow), and whose unique_key is free: of several that share
// one, the oldest.
func retryRound(ctx context.Context, tx pgx.Tx, now time.Time) ([]claim.Job, error) {
	out, err := collectJobs(tx.Query(ctx, `WITH dead AS (
			SELECT seq, unique_key FROM jobs WHERE state = 'dead' AND NOT`+unmetNow+` ORDER BY seq FOR UPDATE OF jobs),
		free AS (
			SELECT DISTINCT ON (d.unique_key, CASE WHEN d.unique_key IS NULL THEN d.seq END) d.seq
			FROM dead d
			WHERE d.unique_key IS NULL OR NOT EXISTS (
				SELECT 1 FROM jobs l WHERE l.unique_key = d.unique_key
				AND l.state IN ('pending', 'processing', 'failed', 'held'))
			ORDER BY d.unique_key, CASE WHEN d.unique_key IS NULL THEN d.seq END, d.seq)
		UPDATE jobs`+retrySet+` FROM free WHERE jobs.seq = free.seq
		RETURNING `+jobColumnsQualified, now.UnixNano()))
	if err != nil {
		return nil, fmt.Errorf("retry dead jobs: %w", err)
	}
	return out, nil
}

// retry re-drives job id in tx. A unique_key another live job holds is
// refused by jobs_unique_key; a savepoint keeps tx usable after it.
func (e *Engine) retry(ctx context.Context, tx pgx.Tx, id string, now time.Time) (claim.Job, claim.Rearmed, error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return claim.Job{}, claim.Rearmed{}, err
	}
	j, err := claim.ScanJob(sp.QueryRow(ctx, "UPDATE jobs"+retrySet+" WHERE id = $2 AND state = 'dead' RETURNING "+jobColumns, now.UnixNano(), id))
	if err == nil {
		r, err := rearm(ctx, sp, id, now)
		if err != nil {
			sp.Rollback(ctx)
			return claim.Job{}, claim.Rearmed{}, err
		}
		if err := refuseBlocked(ctx, sp, id); err != nil {
			sp.Rollback(ctx)
			return claim.Job{}, claim.Rearmed{}, err
		}
		return j, r, sp.Commit(ctx)
	}
	sp.Rollback(ctx)
	if isUnique(err) {
		h, err := keyHolder(ctx, tx, id)
		if err != nil {
			return claim.Job{}, claim.Rearmed{}, err
		}
		return claim.Job{}, claim.Rearmed{}, claim.HeldKeyError(id, h)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return claim.Job{}, claim.Rearmed{}, fmt.Errorf("retry job %s: %w", id, err)
	}
	return claim.Job{}, claim.Rearmed{}, notDead(ctx, tx, id)
}

// notDead explains why a job that should be dead could not be acted on.
func notDead(ctx context.Context, tx pgx.Tx, id string) error {
	var state string
	err := tx.QueryRow(ctx, "SELECT state FROM jobs WHERE id = $1", id).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return claim.NotDeadError(id, "")
	}
	if err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	return claim.NotDeadError(id, claim.State(state))
}

// Purge deletes the dead job id and its runs.
func (e *Engine) Purge(ctx context.Context, id string) error {
	return e.write(ctx, durable, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM jobs WHERE id = $1 AND state = 'dead'", id)
		if err != nil {
			return fmt.Errorf("purge job %s: %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return notDead(ctx, tx, id)
		}
		if err := refuseWaitedFor(ctx, tx, id); err != nil {
			return err
		}
		// Other hosts' workers keep their dead/ in step on wake-ups.
		return e.notify(ctx, tx)
	})
}

// DropEnv drops the env of the completed and canceled jobs that finished
// before cutoff.
func (e *Engine) DropEnv(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE jobs SET env = NULL
			WHERE env IS NOT NULL AND state IN ('completed', 'canceled') AND finished_at < $1`, cutoff.UnixNano())
		if err != nil {
			return fmt.Errorf("drop env: %w", err)
		}
		n = tag.RowsAffected()
		return nil
	})
	return n, err
}

// PurgeFinished deletes jobs in state that finished before cutoff.
func (e *Engine) PurgeFinished(ctx context.Context, state claim.State, cutoff time.Time) ([]string, error) {
	var ids []string
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `DELETE FROM jobs WHERE state = $1 AND finished_at < $2 AND NOT`+waitedFor+` RETURNING id`,
			string(state), cutoff.UnixNano())
		if err != nil {
			return fmt.Errorf("purge jobs: %w", err)
		}
		defer rows.Close()
		if ids, err = claim.Collect(rows, claim.ScanValue[string]); err != nil {
			return fmt.Errorf("purge jobs: %w", err)
		}
		if state != claim.Dead || len(ids) == 0 {
			return nil
		}
		return e.notify(ctx, tx) // dead/ of other hosts, as Purge
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
	return e.queryJobs(ctx, "SELECT "+jobColumns+` FROM jobs
		WHERE state = 'dead' AND unique_key IS NOT NULL AND EXISTS (
			SELECT 1 FROM jobs AS l WHERE l.unique_key = jobs.unique_key
			AND l.state IN ('pending', 'processing', 'failed', 'held'))
		ORDER BY seq`)
}

// rearm re-drives the jobs that id's death made dead, and theirs, down the
// chain, one level a statement. They wait for id again: their count of
// unmet dependencies never changed. One whose unique_key a live job holds
// stays dead, and so do the jobs its death made dead: pending, they would
// wait for a dead job. Of several that share a free key the oldest takes
// it. As on SQLite, whose UPDATE OR IGNORE walks the same way. Those left
// dead are named in Left.
func rearm(ctx context.Context, tx pgx.Tx, id string, now time.Time) (claim.Rearmed, error) {
	var r claim.Rearmed
	err := claim.WalkDown(id, func(next string) ([]string, error) {
		rows, err := tx.Query(ctx, `WITH free AS (
				SELECT DISTINCT ON (coalesce(d.unique_key, d.id)) d.seq FROM jobs d
				WHERE d.dead_by = $2 AND d.state = 'dead'
				AND (d.unique_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs l WHERE l.unique_key = d.unique_key
					AND l.state IN ('pending', 'processing', 'failed', 'held')))
				ORDER BY coalesce(d.unique_key, d.id), d.seq)
			UPDATE jobs`+retrySet+` FROM free WHERE jobs.seq = free.seq RETURNING jobs.id`, now.UnixNano(), next)
		if err != nil {
			return nil, fmt.Errorf("re-arm the dependents of %s: %w", next, err)
		}
		deps, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("re-arm the dependents of %s: %w", next, err)
		}
		rows, err = tx.Query(ctx, "SELECT id FROM jobs WHERE dead_by = $1 AND state = 'dead' ORDER BY seq", next)
		if err != nil {
			return nil, fmt.Errorf("re-arm the dependents of %s: %w", next, err)
		}
		left, err := pgx.CollectRows(rows, pgx.RowTo[string])
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
// dead because a live job holds their unique_key. As on SQLite.
func tellAllKeyHeld(ctx context.Context, tx pgx.Tx, now time.Time) error {
	rows, err := tx.Query(ctx, `SELECT d.id FROM jobs d JOIN jobs p ON p.id = d.dead_by
		WHERE d.state = 'dead' AND p.state NOT IN ('dead', 'canceled') ORDER BY d.seq`)
	if err != nil {
		return fmt.Errorf("find the jobs left dead: %w", err)
	}
	left, err := pgx.CollectRows(rows, pgx.RowTo[string])
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
func keyHolder(ctx context.Context, tx pgx.Tx, id string) (claim.KeyHolder, error) {
	var h claim.KeyHolder
	err := tx.QueryRow(ctx, `SELECT d.unique_key, l.id, l.state FROM jobs d JOIN jobs l ON l.unique_key = d.unique_key
		WHERE d.id = $1 AND l.id <> d.id AND l.state IN ('pending', 'processing', 'failed', 'held')
		ORDER BY l.seq LIMIT 1`, id).Scan(&h.Key, &h.ID, &h.State)
	if errors.Is(err, pgx.ErrNoRows) {
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
// As on SQLite.
func tellKeyHeld(ctx context.Context, tx pgx.Tx, id string, now time.Time) error {
	h, err := keyHolder(ctx, tx, id)
	if err != nil || h.ID == "" {
		return err
	}
	key, holder := h.Key, h.ID
	if _, err := tx.Exec(ctx, "UPDATE jobs SET last_error = $1, updated_at = $2 WHERE id = $3",
		claim.KeyHeldCause(key, holder), now.UnixNano(), id); err != nil {
		return fmt.Errorf("tell %s its key is held: %w", id, err)
	}
	below := claim.KeyHeldBelow(id, key, holder)
	return claim.WalkDown(id, func(x string) ([]string, error) {
		rows, err := tx.Query(ctx, "UPDATE jobs SET last_error = $1, updated_at = $2 WHERE dead_by = $3 AND state = 'dead' RETURNING id",
			below.ErrorFor(x), now.UnixNano(), x)
		if err != nil {
			return nil, fmt.Errorf("tell the jobs below %s its key is held: %w", id, err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("tell the jobs below %s its key is held: %w", id, err)
		}
		return ids, nil
	})
}

// EndDependents makes dead the jobs waiting for each p.ID of ps, held
// ones too, and theirs, down the chain, in one transaction. One statement first finds
// which of ps have dependents at all (most have none): a round trip each
// took 10 s for the 15,000 jobs of a cancel --queue.
func (e *Engine) EndDependents(ctx context.Context, ps []claim.EndDependentsParams) ([]claim.Job, error) {
	var out []claim.Job
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT DISTINCT after_id FROM deps WHERE after_id = ANY($1) AND NOT met`, ids)
		if err != nil {
			return fmt.Errorf("find the dependents of %d jobs: %w", len(ids), err)
		}
		list, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("find the dependents of %d jobs: %w", len(ids), err)
		}
		waited := make(map[string]bool, len(list))
		for _, id := range list {
			waited[id] = true
		}
		for _, p := range ps {
			if !waited[p.ID] {
				continue
			}
			now := p.Now.UnixNano()
			err := claim.WalkDown(p.ID, func(x string) ([]string, error) {
				rows, err := tx.Query(ctx, `UPDATE jobs SET state = 'dead', last_error = $1, dead_by = $2,
					finished_at = $3, updated_at = $3
					WHERE state IN ('pending', 'held') AND waiting > 0
					AND id IN (SELECT job_id FROM deps WHERE after_id = $2 AND NOT met)
					RETURNING `+jobColumns, p.ErrorFor(x), x, now)
				if err != nil {
					return nil, fmt.Errorf("end the dependents of %s: %w", x, err)
				}
				jobs, err := claim.Collect(rows, claim.ScanJob)
				rows.Close()
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
		if len(out) == 0 {
			return nil
		}
		return e.notify(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// HookDone appends text to the run's hook results.
func (e *Engine) HookDone(ctx context.Context, r claim.Run, text string) error {
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE runs SET hooks = CASE WHEN hooks IS NULL THEN $1 ELSE hooks || chr(10) || $1 END
			WHERE job_id = $2 AND attempt = $3`, text, r.JobID, r.Attempt)
		return err
	})
	if err != nil {
		return fmt.Errorf("record hook of %s: %w", r.JobID, err)
	}
	return nil
}

// EndedDependencies reads every unmet dependency on a dead or canceled job.
func (e *Engine) EndedDependencies(ctx context.Context) ([]claim.EndDependentsParams, error) {
	return queryAll(ctx, e, "find ended dependencies", claim.ScanEnded, `SELECT DISTINCT j.id, j.state FROM deps d JOIN jobs j ON j.id = d.after_id
		WHERE NOT d.met AND j.state IN ('dead', 'canceled')`)
}

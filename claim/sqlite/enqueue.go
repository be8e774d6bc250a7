package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Enqueue inserts p.Jobs in one durable (fsync'd) transaction, so a spool
// file is unlinked only after its job is on disk.
func (e *Engine) Enqueue(ctx context.Context, p claim.EnqueueParams) ([]claim.Result, error) {
	var out []claim.Result
	e.prepare(ctx, insertJob, countPending)
	err := e.tx(ctx, func(tx *sql.Tx) (err error) {
		out, err = e.enqueueIn(ctx, tx, e.stmt(ctx, tx, insertJob), p)
		return err
	})
	if err != nil {
		return nil, err
	}
	e.notify()
	return out, nil
}

// EnqueueStream stores every batch of batches in one transaction.
func (e *Engine) EnqueueStream(ctx context.Context, batches iter.Seq2[claim.EnqueueParams, error], each func([]claim.Result) error) error {
	e.prepare(ctx, insertJob, countPending)
	err := e.tx(ctx, func(tx *sql.Tx) error {
		ins := e.stmt(ctx, tx, insertJob)
		for p, err := range batches {
			if err != nil {
				return err
			}
			out, err := e.enqueueIn(ctx, tx, ins, p)
			if err == nil {
				err = each(out)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.notify()
	return nil
}

// enqueueIn stores the batch p in tx with ins.
func (e *Engine) enqueueIn(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, p claim.EnqueueParams) ([]claim.Result, error) {
	out := make([]claim.Result, len(p.Jobs))
	for i, row := range p.Jobs {
		r, err := e.enqueueOne(ctx, tx, ins, row, p)
		if err != nil && !p.Each {
			if isRefusal(err) {
				return nil, &claim.AtError{Index: i, Err: err}
			}
			return nil, err
		}
		if err != nil && !isRefusal(err) {
			return nil, err
		}
		out[i] = r
		if err != nil {
			out[i] = claim.Result{Err: err}
		}
	}
	return out, e.countCreated(ctx, tx, out)
}

func isRefusal(err error) bool {
	return errors.Is(err, claim.ErrInvalid) || errors.Is(err, claim.ErrConflict)
}

// enqueueOne stores row in tx. A job's only write is one INSERT, which
// SQLite applies whole or not at all, and a refused job has written
// nothing. Only a re-drive writes twice, and needs a savepoint to undo the
// first when the batch goes on without it.
func (e *Engine) enqueueOne(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, row claim.NewRow, p claim.EnqueueParams) (claim.Result, error) {
	// A refusal after the insert (a dependency that does not exist) must
	// take the insert back when the batch goes on without the job.
	savepoint := (row.Redrive || len(row.After) > 0) && p.Each
	if savepoint {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT job"); err != nil {
			return claim.Result{}, err
		}
	}
	r, err := e.insert(ctx, tx, ins, row, p.Now)
	if savepoint {
		release := "RELEASE job"
		if err != nil {
			release = "ROLLBACK TO job"
		}
		if _, err := tx.ExecContext(ctx, release); err != nil {
			return claim.Result{}, err
		}
	}
	return r, err
}

// countCreated adds the jobs created in tx to queue_counts: no trigger
// counts inserts (migration3.sql). One statement per queue, and a batch
// is nearly always of one queue.
func (e *Engine) countCreated(ctx context.Context, tx *sql.Tx, rs []claim.Result) error {
	var queues []string
	created := map[string]int{}
	for _, r := range rs {
		if r.Outcome == claim.Created {
			if created[r.Job.Queue] == 0 {
				queues = append(queues, r.Job.Queue)
			}
			created[r.Job.Queue]++
		}
	}
	for _, q := range queues {
		if _, err := e.exec(ctx, tx, countPending, q, created[q]); err != nil {
			return fmt.Errorf("count jobs: %w", err)
		}
	}
	return nil
}

const countPending = `INSERT INTO queue_counts (queue, state, n) VALUES (?, 'pending', ?)
	ON CONFLICT (queue, state) DO UPDATE SET n = n + excluded.n`

const insertJob = `INSERT INTO jobs (id, command, state, queue, priority, max_retries,
	backoff_base, timeout_ns, env, cwd, unique_key, ingest_key, run_at, run_after,
	created_at, updated_at, hooks, limits, label)
VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING`

// insert stores row in tx with ins, insertJob prepared in tx (nil: run it
// unprepared).
func (e *Engine) insert(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, row claim.NewRow, now time.Time) (claim.Result, error) {
	j := row.Job
	var env sql.NullString
	if len(j.Env) > 0 {
		b, _ := json.Marshal(j.Env)
		env = sql.NullString{String: string(b), Valid: true}
	}
	var hooks, limits sql.NullString
	if j.Hooks != (claim.Hooks{}) {
		b, _ := json.Marshal(j.Hooks)
		hooks = sql.NullString{String: string(b), Valid: true}
	}
	if !j.Limits.IsZero() {
		b, _ := json.Marshal(j.Limits)
		limits = sql.NullString{String: string(b), Valid: true}
	}
	args := []any{j.ID, j.Command, j.Queue, j.Priority, j.MaxRetries, j.BackoffBase, int64(j.Timeout),
		env, claim.NullString(j.Cwd), claim.NullString(j.UniqueKey), claim.NullString(row.IngestKey), claim.Nanos(j.RunAt),
		j.RunAfter.UnixNano(), j.CreatedAt.UnixNano(), j.UpdatedAt.UnixNano(), hooks, limits, claim.NullString(j.Label)}
	var res sql.Result
	var err error
	if ins != nil {
		// Without ctx's cancellation: the driver would start a goroutine per
		// row to watch it. The transaction itself still ends with ctx.
		res, err = ins.ExecContext(context.WithoutCancel(ctx), args...)
	} else {
		res, err = tx.ExecContext(ctx, insertJob, args...)
	}
	if err != nil {
		return claim.Result{}, fmt.Errorf("insert job: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return e.explainConflict(ctx, tx, row, now)
	}
	if j.Seq, err = res.LastInsertId(); err != nil {
		return claim.Result{}, fmt.Errorf("insert job: %w", err)
	}
	if len(row.After) > 0 {
		if j.WaitingOn, err = e.insertDeps(ctx, tx, j.ID, row.After); err != nil {
			return claim.Result{}, err
		}
		j.Waiting = len(j.WaitingOn)
	}
	// The job as a SELECT would read it back, built from what was inserted
	// rather than read back with RETURNING: a burst of spool files is
	// ingested faster (TestEnqueueResultIsStored holds the two equal).
	return claim.Result{Job: j, Outcome: claim.Created}, nil
}

// explainConflict finds which uniqueness rule turned an insert into nothing.
func (e *Engine) explainConflict(ctx context.Context, tx *sql.Tx, row claim.NewRow, now time.Time) (claim.Result, error) {
	id := row.Job.ID
	if row.IngestKey != "" {
		j, err := claim.ScanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE ingest_key = ?", row.IngestKey))
		if err == nil {
			return claim.Result{Job: j, Outcome: claim.Duplicate}, nil
		}
	}
	if row.Job.UniqueKey != "" {
		j, err := claim.ScanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+` FROM jobs
			WHERE unique_key = ? AND state IN ('pending', 'processing', 'failed', 'held')`, row.Job.UniqueKey))
		if err == nil {
			return claim.Result{Job: j, Outcome: claim.Skipped}, nil
		}
	}
	j, err := claim.ScanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ?", id))
	if err != nil {
		return claim.Result{}, fmt.Errorf("insert job %s: %w", id, err)
	}
	if row.Redrive && j.State == claim.Dead {
		j, err = e.retry(ctx, tx, id, now)
		if err == nil && row.IngestKey != "" {
			// Remember the dead file, so that seeing it again is a Duplicate.
			if _, err = tx.ExecContext(ctx, "UPDATE jobs SET ingest_key = ? WHERE id = ?", row.IngestKey, id); err != nil {
				err = fmt.Errorf("redrive job %s: %w", id, err)
			}
		}
		return claim.Result{Job: j, Outcome: claim.Redriven}, err
	}
	return claim.Result{}, claim.ExistsError(j)
}

// insertDeps records that job waits for the jobs after, and counts those
// not yet completed into its waiting column. It returns their ids. The
// dependencies' states are read in the transaction that holds the write
// lock, so none can complete between the count and the commit.
func (e *Engine) insertDeps(ctx context.Context, tx *sql.Tx, job string, after []string) ([]string, error) {
	states := map[string]claim.State{}
	for _, id := range after {
		var st string
		err := tx.QueryRowContext(ctx, "SELECT state FROM jobs WHERE id = ?", id).Scan(&st)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read dependency %s: %w", id, err)
		}
		states[id] = claim.State(st)
	}
	var unknown, unmet []string
	for _, id := range after {
		switch st, ok := states[id]; {
		case !ok:
			unknown = append(unknown, id)
		case claim.DependencyEnded(st):
			return nil, claim.DeadDependencyError(id, st)
		case st != claim.Completed:
			unmet = append(unmet, id)
		}
	}
	if len(unknown) > 0 {
		return nil, claim.UnknownDependencyError(unknown)
	}
	for _, id := range after {
		met := states[id] == claim.Completed
		if _, err := tx.ExecContext(ctx, "INSERT INTO deps (after_id, job_id, met) VALUES (?, ?, ?)", id, job, met); err != nil {
			return nil, fmt.Errorf("record dependency %s of %s: %w", id, job, err)
		}
	}
	if len(unmet) > 0 {
		if _, err := tx.ExecContext(ctx, "UPDATE jobs SET waiting = ? WHERE id = ?", len(unmet), job); err != nil {
			return nil, fmt.Errorf("record dependencies of %s: %w", job, err)
		}
	}
	return unmet, nil
}

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/jobs"
)

// Enqueue inserts p.Jobs in one durable (fsync'd) transaction, so a spool
// file is unlinked only after its job is on disk.
func (e *Engine) Enqueue(ctx context.Context, p claim.EnqueueParams) ([]claim.Result, error) {
	var out []claim.Result
	e.prepare(ctx, insertJob, countPending, goneIngest)
	var ins *inserter
	err := e.tx(ctx, func(tx *sql.Tx) (err error) {
		ins = e.inserter(ctx, tx)
		out, err = e.enqueueIn(ctx, tx, ins, p)
		return err
	})
	if err != nil {
		ins.closeAfter(ctx)
		return nil, err
	}
	e.notify()
	ins.closeAfter(ctx)
	return out, nil
}

// EnqueueStream stores every batch of batches in one transaction.
func (e *Engine) EnqueueStream(ctx context.Context, batches iter.Seq2[claim.EnqueueParams, error], each func([]claim.Result) error) error {
	e.prepare(ctx, insertJob, countPending, goneIngest)
	var ins *inserter
	err := e.tx(ctx, func(tx *sql.Tx) error {
		ins = e.inserter(ctx, tx)
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
		ins.closeAfter(ctx)
		return err
	}
	e.notify()
	ins.closeAfter(ctx)
	return nil
}

// enqueueIn stores the batch p in tx, but for rows whose spool file made a
// job removed since (goneIngests): those are Duplicates.
func (e *Engine) enqueueIn(ctx context.Context, tx *sql.Tx, ins *inserter, p claim.EnqueueParams) ([]claim.Result, error) {
	gone, err := e.goneIngests(ctx, tx, p.Jobs)
	if err != nil {
		return nil, err
	}
	return claim.EnqueueNotGone(p, gone, func(p claim.EnqueueParams) ([]claim.Result, error) {
		return e.enqueueRows(ctx, tx, ins, p)
	})
}

const goneIngest = "SELECT job_id FROM gone_ingests WHERE ingest_key = ?"

// goneIngests finds the rows of batch whose spool file made a job that was
// removed since (migration18.sql): index, and the removed job's id. Only
// a file found taken already (IngestAgain) can have made one.
func (e *Engine) goneIngests(ctx context.Context, tx *sql.Tx, batch []claim.NewRow) (map[int]string, error) {
	var gone map[int]string
	for i, row := range batch {
		if row.IngestKey == "" || !row.IngestAgain {
			continue
		}
		var id string
		err := e.queryRow(ctx, tx, goneIngest, row.IngestKey).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("look up spool file %s: %w", row.IngestKey, err)
		}
		if gone == nil {
			gone = map[int]string{}
		}
		gone[i] = id
	}
	return gone, nil
}

// enqueueRows stores the batch p in tx. Runs of rows whose outcome cannot
// change what a later row finds go in one statement each (insertRun); a
// re-drive, and a job with after in an EnqueueEach batch (whose refusal
// takes its insert back), go one by one (enqueueOne). Either way each row
// gets the outcome it would get alone, in order.
func (e *Engine) enqueueRows(ctx context.Context, tx *sql.Tx, ins *inserter, p claim.EnqueueParams) ([]claim.Result, error) {
	out := ins.results(len(p.Jobs))
	settle := func(i int, r claim.Result, err error) error { return settleRow(out, i, r, err, p.Each) }
	for i := 0; i < len(p.Jobs); {
		n := 0
		for i+n < len(p.Jobs) && n < maxRun && !alone(p.Jobs[i+n], p.Each) {
			n++
		}
		if n >= minRun {
			n = runSize(n)
		}
		if n >= minRun && distinctIDs(p.Jobs[i:i+n]) {
			if err := e.insertRun(ctx, tx, ins, p.Jobs[i:i+n], p.Now, func(k int, r claim.Result, err error) error {
				return settle(i+k, r, err)
			}); err != nil {
				return nil, err
			}
			i += n
			continue
		}
		r, err := e.enqueueOne(ctx, tx, ins.one, p.Jobs[i], p)
		if err := settle(i, r, err); err != nil {
			return nil, err
		}
		i++
	}
	return out, e.countCreated(ctx, tx, out)
}

// settleRow records row i's outcome in out: an error ends the batch unless
// it is a refusal in an EnqueueEach batch (each).
func settleRow(out []claim.Result, i int, r claim.Result, err error, each bool) error {
	if err != nil && !each {
		if isRefusal(err) {
			return &claim.AtError{Index: i, Err: err}
		}
		return err
	}
	if err != nil && !isRefusal(err) {
		return err
	}
	out[i] = r
	if err != nil {
		out[i] = claim.Result{Err: err}
	}
	return nil
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
	created_at, updated_at, hooks, limits, label, umask)
VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING`

// insert stores row in tx with ins, insertJob prepared in tx (nil: run it
// unprepared).
func (e *Engine) insert(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, row claim.NewRow, now time.Time) (claim.Result, error) {
	j := row.Job
	args := appendJobArgs(make([]any, 0, jobArgs), row)
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
		return e.explainConflict(ctx, tx, row, now, math.MaxInt64)
	}
	if j.Seq, err = res.LastInsertId(); err != nil {
		return claim.Result{}, fmt.Errorf("insert job: %w", err)
	}
	return e.created(ctx, tx, row, j.Seq)
}

// created is the Result of row, stored as seq, once its dependencies are
// recorded.
func (e *Engine) created(ctx context.Context, tx *sql.Tx, row claim.NewRow, seq int64) (claim.Result, error) {
	j := row.Job
	j.Seq = seq
	if len(row.After) > 0 {
		var err error
		if j.WaitingOn, err = e.insertDeps(ctx, tx, j.ID, row.After, seq); err != nil {
			return claim.Result{}, err
		}
		j.Waiting = len(j.WaitingOn)
	}
	// The job as a SELECT would read it back, built from what was inserted
	// rather than read back: a burst of spool files is ingested faster
	// (TestEnqueueResultIsStored holds the two equal).
	return claim.Result{Job: j, Outcome: claim.Created}, nil
}

// jobArgs is how many arguments a row of insertJob takes.
const jobArgs = 19

// appendJobArgs appends the arguments of row to args, in insertJob's order.
func appendJobArgs(args []any, row claim.NewRow) []any {
	j := row.Job
	var env, hooks, limits any
	if len(j.Env) > 0 {
		b, _ := json.Marshal(jobs.EscapeEnv(j.Env))
		env = string(b)
	}
	if j.Hooks != (claim.Hooks{}) {
		b, _ := json.Marshal(j.Hooks)
		hooks = string(b)
	}
	if !j.Limits.IsZero() {
		b, _ := json.Marshal(j.Limits)
		limits = string(b)
	}
	var runAt any
	if !j.RunAt.IsZero() {
		runAt = j.RunAt.UnixNano()
	}
	var umask any
	if j.Umask != nil {
		umask = int64(*j.Umask)
	}
	// Every argument is of a type the driver takes as it is (int64, not
	// int; nil, not a sql.Null*): database/sql converts the others one by
	// one, through reflection or a Valuer, 19 times a row.
	return append(args, j.ID, j.Command, j.Queue, int64(j.Priority), int64(j.MaxRetries), int64(j.BackoffBase),
		int64(j.Timeout), env, nullable(j.Cwd), nullable(j.UniqueKey), nullable(row.IngestKey), runAt,
		j.RunAfter.UnixNano(), j.CreatedAt.UnixNano(), j.UpdatedAt.UnixNano(), hooks, limits, nullable(j.Label), umask)
}

// nullable is s as a nullable text argument: NULL when s is empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// explainConflict finds which uniqueness rule turned an insert into nothing:
// which job of those stored before seq before refused it.
func (e *Engine) explainConflict(ctx context.Context, tx *sql.Tx, row claim.NewRow, now time.Time, before int64) (claim.Result, error) {
	id := row.Job.ID
	if row.IngestKey != "" {
		j, err := claim.ScanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE ingest_key = ? AND seq < ?", row.IngestKey, before))
		if err == nil {
			return claim.Result{Job: j, Outcome: claim.Duplicate}, nil
		}
	}
	if row.Job.UniqueKey != "" {
		j, err := claim.ScanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+` FROM jobs
			WHERE unique_key = ? AND state IN ('pending', 'processing', 'failed', 'held') AND seq < ?`, row.Job.UniqueKey, before))
		if err == nil {
			return claim.Result{Job: j, Outcome: claim.Skipped}, nil
		}
	}
	j, err := claim.ScanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ? AND seq < ?", id, before))
	if err != nil {
		return claim.Result{}, fmt.Errorf("insert job %s: %w", id, err)
	}
	if row.Redrive && j.State == claim.Dead {
		var r claim.Rearmed
		j, r, err = e.retry(ctx, tx, id, now)
		if err == nil && row.IngestKey != "" {
			// Remember the dead file, so that seeing it again is a Duplicate.
			if _, err = tx.ExecContext(ctx, "UPDATE jobs SET ingest_key = ? WHERE id = ?", row.IngestKey, id); err != nil {
				err = fmt.Errorf("redrive job %s: %w", id, err)
			}
		}
		return claim.Result{Job: j, Outcome: claim.Redriven, Rearmed: r}, err
	}
	return claim.Result{}, claim.InsertConflict(j, row.Redrive)
}

// insertDeps records that job waits for the jobs after, and counts those
// not yet completed into its waiting column. It returns their ids. Only
// jobs stored up to seq upTo (the job's own) are looked at, so that a job
// inserted in the same statement but later in its batch is unknown, as it
// was when the job was inserted alone. The
// dependencies' states are read in the transaction that holds the write
// lock, so none can complete between the count and the commit.
func (e *Engine) insertDeps(ctx context.Context, tx *sql.Tx, job string, after []string, upTo int64) ([]string, error) {
	states := map[string]claim.State{}
	for _, id := range after {
		var st string
		err := tx.QueryRowContext(ctx, "SELECT state FROM jobs WHERE id = ? AND seq <= ?", id, upTo).Scan(&st)
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

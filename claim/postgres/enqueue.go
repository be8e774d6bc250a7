package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/jobs"
)

// insertJobs inserts a batch in one statement, its rows in order (so seq
// follows the batch), skipping each that a unique constraint refuses: the
// id, the spool file's ingest_key, a live job's unique_key (also one
// inserted earlier in the same batch). It returns the ids and seqs of the
// rows it inserted.
const insertJobs = `INSERT INTO jobs (id, command, state, queue, priority, max_retries,
	backoff_base, timeout_ns, env, cwd, unique_key, ingest_key, run_at, run_after,
	created_at, updated_at, hooks, limits, label, umask)
SELECT id, command, 'pending', queue, priority, max_retries, backoff_base, timeout_ns,
	env, cwd, unique_key, ingest_key, run_at, run_after, created_at, created_at, hooks, limits, label, umask
FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::integer[], $6::integer[],
	$7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[], $13::bigint[],
	$14::bigint[], $15::text[], $16::text[], $17::text[], $18::integer[]) WITH ORDINALITY
	AS b(id, command, queue, priority, max_retries, backoff_base, timeout_ns, env, cwd,
	unique_key, ingest_key, run_at, run_after, created_at, hooks, limits, label, umask, i)
ORDER BY i
ON CONFLICT DO NOTHING
RETURNING id, seq`

// countQuery adds the jobs a batch created to their queues' counts.
const countQuery = `SELECT queuectl_count(q, 'pending', n) FROM unnest($1::text[], $2::bigint[]) AS c(q, n)`

// Enqueue stores p.Jobs in one durable transaction: one statement inserts
// them all, and only the rows it skipped are looked at one by one.
func (e *Engine) Enqueue(ctx context.Context, p claim.EnqueueParams) ([]claim.Result, error) {
	var out []claim.Result
	err := e.write(ctx, durable, func(tx pgx.Tx) (err error) {
		out, err = e.enqueueIn(ctx, tx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EnqueueStream stores every batch of batches in one transaction.
func (e *Engine) EnqueueStream(ctx context.Context, batches iter.Seq2[claim.EnqueueParams, error], each func([]claim.Result) error) error {
	return e.write(ctx, durable, func(tx pgx.Tx) error {
		for p, err := range batches {
			if err != nil {
				return err
			}
			out, err := e.enqueueIn(ctx, tx, p)
			if err == nil {
				err = each(out)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// enqueueIn is the transaction of Enqueue: the batch p, but for rows whose
// spool file made a job removed since (goneIngests), which are Duplicates.
func (e *Engine) enqueueIn(ctx context.Context, tx pgx.Tx, p claim.EnqueueParams) ([]claim.Result, error) {
	gone, err := goneIngests(ctx, tx, p.Jobs)
	if err != nil {
		return nil, err
	}
	return claim.EnqueueNotGone(p, gone, func(p claim.EnqueueParams) ([]claim.Result, error) {
		return e.enqueueRows(ctx, tx, p)
	})
}

// goneIngests finds the rows of batch whose spool file made a job that was
// removed since (migration15.sql): index, and the removed job's id. Only
// a file found taken already (IngestAgain) can have made one: one
// statement for the batch, and none for a batch without such files.
func goneIngests(ctx context.Context, tx pgx.Tx, batch []claim.NewRow) (map[int]string, error) {
	var keys []string
	at := map[string]int{}
	for i, row := range batch {
		if row.IngestKey != "" && row.IngestAgain {
			keys, at[row.IngestKey] = append(keys, row.IngestKey), i
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, "SELECT ingest_key, job_id FROM gone_ingests WHERE ingest_key = ANY($1)", keys)
	if err != nil {
		return nil, fmt.Errorf("look up spool files: %w", err)
	}
	var gone map[int]string
	for rows.Next() {
		var key, id string
		if err := rows.Scan(&key, &id); err != nil {
			return nil, err
		}
		if gone == nil {
			gone = map[int]string{}
		}
		gone[at[key]] = id
	}
	return gone, rows.Err()
}

// enqueueRows stores the batch p in tx.
func (e *Engine) enqueueRows(ctx context.Context, tx pgx.Tx, p claim.EnqueueParams) ([]claim.Result, error) {
	seqs, err := insertBatch(ctx, tx, p.Jobs)
	if err != nil {
		return nil, err
	}
	out := make([]claim.Result, len(p.Jobs))
	for i, row := range p.Jobs {
		// An id repeated in the batch: its first row is the one inserted.
		if seq, ok := seqs[row.Job.ID]; ok {
			delete(seqs, row.Job.ID)
			r, err := insertDeps(ctx, tx, row, seq)
			switch {
			case err != nil && !isRefusal(err):
				return nil, err
			case err != nil && !p.Each:
				return nil, &claim.AtError{Index: i, Err: err}
			case err != nil:
				r = claim.Result{Err: err}
			}
			out[i] = r
			continue
		}
		r, err := e.explain(ctx, tx, row, p)
		switch {
		case err != nil && !isRefusal(err):
			return nil, err
		case err != nil && !p.Each:
			return nil, &claim.AtError{Index: i, Err: err}
		case err != nil:
			r = claim.Result{Err: err}
		}
		out[i] = r
	}
	if err := e.countCreated(ctx, tx, out); err != nil {
		return nil, err
	}
	return out, nil
}

func isRefusal(err error) bool {
	return errors.Is(err, claim.ErrInvalid) || errors.Is(err, claim.ErrConflict)
}

// insertBatch runs insertJobs and returns the seq of each id inserted.
func insertBatch(ctx context.Context, tx pgx.Tx, rows []claim.NewRow) (map[string]int64, error) {
	n := len(rows)
	var (
		ids, commands, queues         = make([]string, n), make([]string, n), make([]string, n)
		priorities, retries, backoffs = make([]int32, n), make([]int32, n), make([]int32, n)
		timeouts, runAfters, created  = make([]int64, n), make([]int64, n), make([]int64, n)
		envs, cwds, uniques, ingests  = make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
		hooks, limits, labels         = make([]*string, n), make([]*string, n), make([]*string, n)
		runAts                        = make([]*int64, n)
		umasks                        = make([]*int32, n)
	)
	for i, r := range rows {
		j := r.Job
		ids[i], commands[i], queues[i] = j.ID, j.Command, j.Queue
		priorities[i], retries[i], backoffs[i] = int32(j.Priority), int32(j.MaxRetries), int32(j.BackoffBase)
		timeouts[i], runAfters[i], created[i] = int64(j.Timeout), j.RunAfter.UnixNano(), j.CreatedAt.UnixNano()
		if len(j.Env) > 0 {
			b, _ := json.Marshal(jobs.EscapeEnv(j.Env))
			envs[i] = ptr(string(b))
		}
		cwds[i], uniques[i], ingests[i] = optional(j.Cwd), optional(j.UniqueKey), optional(r.IngestKey)
		labels[i] = optional(j.Label)
		if j.Umask != nil {
			umasks[i] = ptr(int32(*j.Umask))
		}
		if j.Hooks != (claim.Hooks{}) {
			b, _ := json.Marshal(j.Hooks)
			hooks[i] = ptr(string(b))
		}
		if !j.Limits.IsZero() {
			b, _ := json.Marshal(j.Limits)
			limits[i] = ptr(string(b))
		}
		if !j.RunAt.IsZero() {
			runAts[i] = ptr(j.RunAt.UnixNano())
		}
	}
	res, err := tx.Query(ctx, insertJobs, ids, commands, queues, priorities, retries, backoffs,
		timeouts, envs, cwds, uniques, ingests, runAts, runAfters, created, hooks, limits, labels, umasks)
	if err != nil {
		return nil, fmt.Errorf("insert jobs: %w", err)
	}
	defer res.Close()
	seqs := make(map[string]int64, n)
	err = claim.Each(res, func(r claim.Scanner) error {
		var id string
		var seq int64
		err := r.Scan(&id, &seq)
		seqs[id] = seq
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("insert jobs: %w", err)
	}
	return seqs, nil
}

// countCreated adds the jobs created in tx to their queues' counts, and
// wakes the listeners, in one round trip.
func (e *Engine) countCreated(ctx context.Context, tx pgx.Tx, rs []claim.Result) error {
	created := map[string]int64{}
	var queues []string
	for _, r := range rs {
		if r.Outcome == claim.Created {
			if created[r.Job.Queue] == 0 {
				queues = append(queues, r.Job.Queue)
			}
			created[r.Job.Queue]++
		}
	}
	counts := make([]int64, len(queues))
	for i, q := range queues {
		counts[i] = created[q]
	}
	b := &pgx.Batch{}
	b.Queue(countQuery, queues, counts)
	b.Queue(notifyQuery, e.channel)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("count jobs: %w", err)
	}
	return nil
}

// explain finds which uniqueness rule refused row, and re-drives a dead
// job whose file came back. In an EnqueueEach batch the re-drive runs in a
// savepoint, so that its failure leaves the others' inserts.
func (e *Engine) explain(ctx context.Context, tx pgx.Tx, row claim.NewRow, p claim.EnqueueParams) (claim.Result, error) {
	if !row.Redrive || !p.Each {
		return e.explainConflict(ctx, tx, row, p.Now)
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return claim.Result{}, err
	}
	r, err := e.explainConflict(ctx, sp, row, p.Now)
	if err != nil {
		sp.Rollback(ctx)
		return r, err
	}
	return r, sp.Commit(ctx)
}

// explainConflict finds which uniqueness rule turned an insert into nothing.
func (e *Engine) explainConflict(ctx context.Context, tx pgx.Tx, row claim.NewRow, now time.Time) (claim.Result, error) {
	id := row.Job.ID
	if row.IngestKey != "" {
		j, err := claim.ScanJob(tx.QueryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE ingest_key = $1", row.IngestKey))
		if err == nil {
			return claim.Result{Job: j, Outcome: claim.Duplicate}, nil
		}
	}
	if row.Job.UniqueKey != "" {
		j, err := claim.ScanJob(tx.QueryRow(ctx, "SELECT "+jobColumns+` FROM jobs
			WHERE unique_key = $1 AND state IN ('pending', 'processing', 'failed', 'held')`, row.Job.UniqueKey))
		if err == nil {
			return claim.Result{Job: j, Outcome: claim.Skipped}, nil
		}
	}
	j, err := claim.ScanJob(tx.QueryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = $1", id))
	if err != nil {
		return claim.Result{}, fmt.Errorf("insert job %s: %w", id, err)
	}
	if row.Redrive && j.State == claim.Dead {
		var r claim.Rearmed
		j, r, err = e.retry(ctx, tx, id, now)
		if err == nil && row.IngestKey != "" {
			// Remember the dead file, so that seeing it again is a Duplicate.
			if _, err = tx.Exec(ctx, "UPDATE jobs SET ingest_key = $1 WHERE id = $2", row.IngestKey, id); err != nil {
				err = fmt.Errorf("redrive job %s: %w", id, err)
			}
		}
		return claim.Result{Job: j, Outcome: claim.Redriven, Rearmed: r}, err
	}
	return claim.Result{}, claim.InsertConflict(j, row.Redrive)
}

func ptr[T any](v T) *T { return &v }

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// insertDeps records that the job row inserted (as seq) waits for
// row.After, counts those not yet completed into its waiting column, and
// returns the job as stored. The dependencies' rows are locked (FOR SHARE)
// while they are read, so none can complete or die between the count and
// the commit. A refusal (an unknown or ended dependency) deletes the job
// again, so that the batch can go on without it.
func insertDeps(ctx context.Context, tx pgx.Tx, row claim.NewRow, seq int64) (claim.Result, error) {
	j := row.Job
	j.Seq = seq
	if len(row.After) == 0 {
		return claim.Result{Job: j, Outcome: claim.Created}, nil
	}
	states := map[string]claim.State{}
	rows, err := tx.Query(ctx, "SELECT id, state FROM jobs WHERE id = ANY($1) FOR SHARE", row.After)
	if err != nil {
		return claim.Result{}, fmt.Errorf("read dependencies of %s: %w", j.ID, err)
	}
	err = claim.Each(rows, func(r claim.Scanner) error {
		var id, st string
		err := r.Scan(&id, &st)
		states[id] = claim.State(st)
		return err
	})
	rows.Close()
	if err != nil {
		return claim.Result{}, fmt.Errorf("read dependencies of %s: %w", j.ID, err)
	}
	var unknown, unmet []string
	var refusal error
	for _, id := range row.After {
		switch st, ok := states[id]; {
		case !ok:
			unknown = append(unknown, id)
		case claim.DependencyEnded(st) && refusal == nil:
			refusal = claim.DeadDependencyError(id, st)
		case st != claim.Completed:
			unmet = append(unmet, id)
		}
	}
	if refusal == nil && len(unknown) > 0 {
		refusal = claim.UnknownDependencyError(unknown)
	}
	if refusal != nil {
		// The delete trigger counts the job out of pending, where enqueue
		// had not yet counted it in: count it back.
		_, err := tx.Exec(ctx, `WITH gone AS (DELETE FROM jobs WHERE seq = $1 RETURNING queue)
			SELECT queuectl_count(queue, 'pending', 1) FROM gone`, seq)
		if err != nil {
			return claim.Result{}, err
		}
		return claim.Result{}, refusal
	}
	met := make([]bool, len(row.After))
	for i, id := range row.After {
		met[i] = states[id] == claim.Completed
	}
	_, err = tx.Exec(ctx, `WITH d AS (
			INSERT INTO deps (after_id, job_id, met) SELECT a, $2, m FROM unnest($1::text[], $3::boolean[]) AS x(a, m))
		UPDATE jobs SET waiting = $4 WHERE seq = $5`, row.After, j.ID, met, len(unmet), seq)
	if err != nil {
		return claim.Result{}, fmt.Errorf("record dependencies of %s: %w", j.ID, err)
	}
	j.Waiting, j.WaitingOn = len(unmet), unmet
	return claim.Result{Job: j, Outcome: claim.Created}, nil
}

package claim

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"
)

// Outcome says what Enqueue did with a NewJob.
type Outcome string

const (
	// Created: a new job was stored.
	Created Outcome = "created"
	// Skipped: a live job with the same unique_key exists; Result.Job is it.
	Skipped Outcome = "skipped"
	// Duplicate: a job from the same spool file (IngestKey) exists already.
	Duplicate Outcome = "duplicate"
	// Redriven: a dead job's file came back and the job is pending again.
	Redriven Outcome = "redriven"
)

// Result is what became of one NewJob.
type Result struct {
	Job     Job
	Outcome Outcome
	Err     error // EnqueueEach only
}

// Enqueue stores one job durably: when it returns nil, the commit is fsync'd.
// Errors: ErrInvalid (bad spec, missing cwd), ErrConflict (the id exists).
func (s *Store) Enqueue(ctx context.Context, nj NewJob) (Result, error) {
	rs, err := s.EnqueueAll(ctx, []NewJob{nj})
	if err != nil {
		return Result{}, err
	}
	return rs[0], nil
}

// EnqueueAll stores jobs in one transaction: all of them, or none when any
// is refused (the error names its index).
func (s *Store) EnqueueAll(ctx context.Context, jobs []NewJob) ([]Result, error) {
	cfg, err := s.Config(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(jobs))
	s.prepare(ctx, insertJob, countPending)
	err = s.tx(ctx, func(tx *sql.Tx) error {
		ins := s.stmt(ctx, tx, insertJob)
		for i, nj := range jobs {
			r, err := s.enqueue(ctx, tx, ins, cfg, nj)
			if err != nil {
				if len(jobs) > 1 {
					return fmt.Errorf("job %d of %d: %w", i+1, len(jobs), err)
				}
				return err
			}
			out[i] = r
		}
		return s.countCreated(ctx, tx, out)
	})
	if err != nil {
		return nil, err
	}
	s.notify()
	return out, nil
}

// EnqueueEach stores jobs in one transaction, each on its own: a refused job
// gets its Result.Err and the others are still stored. The error is for the
// transaction as a whole (then nothing was stored).
func (s *Store) EnqueueEach(ctx context.Context, jobs []NewJob) ([]Result, error) {
	cfg, err := s.Config(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(jobs))
	s.prepare(ctx, insertJob, countPending)
	err = s.tx(ctx, func(tx *sql.Tx) error {
		ins := s.stmt(ctx, tx, insertJob)
		for i, nj := range jobs {
			// A job's only write is one INSERT, which SQLite applies whole
			// or not at all, and a refused job has written nothing. Only a
			// re-drive writes twice, and needs a savepoint to undo the first.
			if nj.Redrive {
				if _, err := tx.ExecContext(ctx, "SAVEPOINT job"); err != nil {
					return err
				}
			}
			r, err := s.enqueue(ctx, tx, ins, cfg, nj)
			if err != nil && (errors.Is(err, ErrInvalid) || errors.Is(err, ErrConflict)) {
				out[i] = Result{Err: err}
				if nj.Redrive {
					if _, err := tx.ExecContext(ctx, "ROLLBACK TO job"); err != nil {
						return err
					}
				}
				continue
			}
			if err != nil {
				return err
			}
			out[i] = r
			if nj.Redrive {
				if _, err := tx.ExecContext(ctx, "RELEASE job"); err != nil {
					return err
				}
			}
		}
		return s.countCreated(ctx, tx, out)
	})
	if err != nil {
		return nil, err
	}
	s.notify()
	return out, nil
}

// countCreated adds the jobs created in tx to queue_counts: no trigger
// counts inserts (migration3.sql). One statement per queue, and a batch
// is nearly always of one queue.
func (s *Store) countCreated(ctx context.Context, tx *sql.Tx, rs []Result) error {
	var queues []string
	created := map[string]int{}
	for _, r := range rs {
		if r.Outcome == Created {
			if created[r.Job.Queue] == 0 {
				queues = append(queues, r.Job.Queue)
			}
			created[r.Job.Queue]++
		}
	}
	for _, q := range queues {
		if _, err := s.exec(ctx, tx, countPending, q, created[q]); err != nil {
			return fmt.Errorf("count jobs: %w", err)
		}
	}
	return nil
}

const countPending = `INSERT INTO queue_counts (queue, state, n) VALUES (?, 'pending', ?)
	ON CONFLICT (queue, state) DO UPDATE SET n = n + excluded.n`

const insertJob = `INSERT INTO jobs (id, command, state, queue, priority, max_retries,
	backoff_base, timeout_ns, env, cwd, unique_key, ingest_key, run_at, run_after,
	created_at, updated_at)
VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING`

// enqueue stores nj in tx with ins, insertJob prepared in tx (nil: run it
// unprepared).
func (s *Store) enqueue(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, cfg Config, nj NewJob) (Result, error) {
	if err := nj.Validate(); err != nil {
		return Result{}, err
	}
	if nj.Cwd != "" {
		if fi, err := os.Stat(nj.Cwd); err != nil || !fi.IsDir() {
			return Result{}, invalidf("cwd %q is not an existing directory; create it or fix the path", nj.Cwd)
		}
	}
	now := s.Now()
	if nj.ID == "" {
		nj.ID = NewID(now)
	}
	maxRetries, backoff, timeout := cfg.MaxRetries, cfg.BackoffBase, cfg.JobTimeout
	if nj.MaxRetries != nil {
		maxRetries = *nj.MaxRetries
	}
	if nj.BackoffBase != nil {
		backoff = *nj.BackoffBase
	}
	if nj.Timeout != nil {
		timeout = *nj.Timeout
	}
	queue := nj.Queue
	if queue == "" {
		queue = "default"
	}
	runAt := nj.RunAt
	if nj.Delay > 0 {
		runAt = now.Add(nj.Delay)
	}
	runAfter := now
	if !runAt.IsZero() {
		runAfter = runAt
	}
	var env sql.NullString
	if len(nj.Env) > 0 {
		b, _ := json.Marshal(nj.Env)
		env = sql.NullString{String: string(b), Valid: true}
	}
	args := []any{nj.ID, nj.Command, queue, nj.Priority,
		maxRetries, backoff, int64(timeout), env, nullString(nj.Cwd), nullString(nj.UniqueKey),
		nullString(nj.IngestKey), nanos(runAt), runAfter.UnixNano(), now.UnixNano(), now.UnixNano()}
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
		return Result{}, fmt.Errorf("insert job: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return s.explainConflict(ctx, tx, nj)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return Result{}, fmt.Errorf("insert job: %w", err)
	}
	// The job as a SELECT would read it back, built from what was inserted
	// rather than read back with RETURNING: a burst of spool files is
	// ingested faster (TestEnqueueResultIsStored holds the two equal).
	j := Job{Seq: seq, ID: nj.ID, Command: nj.Command, State: Pending, Queue: queue,
		Priority: nj.Priority, MaxRetries: maxRetries, BackoffBase: backoff, Timeout: timeout,
		Env: maps.Clone(nj.Env), Cwd: nj.Cwd, UniqueKey: nj.UniqueKey, RunAt: fromNanos(nanos(runAt)),
		RunAfter: time.Unix(0, runAfter.UnixNano()).UTC(), CreatedAt: time.Unix(0, now.UnixNano()).UTC()}
	if len(j.Env) == 0 {
		j.Env = nil
	}
	j.UpdatedAt = j.CreatedAt
	return Result{Job: j, Outcome: Created}, nil
}

// explainConflict finds which uniqueness rule turned an insert into nothing.
func (s *Store) explainConflict(ctx context.Context, tx *sql.Tx, nj NewJob) (Result, error) {
	if nj.IngestKey != "" {
		j, err := scanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE ingest_key = ?", nj.IngestKey))
		if err == nil {
			return Result{Job: j, Outcome: Duplicate}, nil
		}
	}
	if nj.UniqueKey != "" {
		j, err := scanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+` FROM jobs
			WHERE unique_key = ? AND state IN ('pending', 'processing', 'failed')`, nj.UniqueKey))
		if err == nil {
			return Result{Job: j, Outcome: Skipped}, nil
		}
	}
	j, err := scanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ?", nj.ID))
	if err != nil {
		return Result{}, fmt.Errorf("insert job %s: %w", nj.ID, err)
	}
	if nj.Redrive && j.State == Dead {
		j, err = s.retry(ctx, tx, nj.ID)
		if err == nil && nj.IngestKey != "" {
			// Remember the dead file, so that seeing it again is a Duplicate.
			if _, err = tx.ExecContext(ctx, "UPDATE jobs SET ingest_key = ? WHERE id = ?", nj.IngestKey, nj.ID); err != nil {
				err = fmt.Errorf("redrive job %s: %w", nj.ID, err)
			}
		}
		return Result{Job: j, Outcome: Redriven}, err
	}
	return Result{}, fmt.Errorf("%w: job %s exists already (state %s); pick another id or leave id out", ErrConflict, nj.ID, j.State)
}

// NewID returns a unique job id that sorts by creation time and reads as one:
// 20261121-054500.123456-9f2c1ab0.
func NewID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102-150405.000000") + "-" + hex.EncodeToString(b[:])
}

func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

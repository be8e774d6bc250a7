package claim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Claimant is the worker slot asking for a job.
type Claimant struct {
	WorkerID string
	Host     string
	PID      int
	Queues   []string // empty: every queue
	Lease    time.Duration
	LogDir   string // runs log to LogDir/<id>/<attempt>.out and .err
}

// Claim takes the next runnable job for c — highest priority, then earliest
// not-before time, then enqueue order — and records a new run of it. The
// whole claim is one UPDATE … RETURNING inside BEGIN IMMEDIATE, so no two
// claimants, in any process, can take the same job. It returns ErrNoJob when
// nothing is runnable.
func (s *Store) Claim(ctx context.Context, c Claimant) (Job, Run, error) {
	now := s.now()
	var job Job
	var run Run
	q, args := claimQuery(c, now)
	s.prepare(ctx, q, insertRun)
	// Light: a claim a power cut takes back is a job pending again, and the
	// run it started died with the machine.
	err := s.write(ctx, light, func(tx *sql.Tx) (err error) {
		job, run, err = s.claimIn(ctx, tx, c, now, q, args)
		return err
	})
	return job, run, err
}

// CompleteAndClaim is Complete(done) and then Claim(c), in one transaction:
// a busy slot's one write per job instead of two. lost reports that done
// had been recovered meanwhile (Complete's ErrLost): its result is dropped,
// and the claim happens all the same. The error is ErrNoJob when nothing is
// runnable, with done completed all the same; any other error means that
// nothing was recorded.
func (s *Store) CompleteAndClaim(ctx context.Context, done Run, c Claimant) (j Job, r Run, lost bool, err error) {
	now := s.now()
	q, args := claimQuery(c, now)
	s.prepare(ctx, completeJob, endRunQuery, q, insertRun)
	var none bool
	err = s.write(ctx, light, func(tx *sql.Tx) error {
		err := s.finishIn(ctx, tx, done, completeJob, completeArgs(done, now), now, OutcomeCompleted, intPtr(0), "")
		if lost = errors.Is(err, ErrLost); err != nil && !lost {
			return err
		}
		j, r, err = s.claimIn(ctx, tx, c, now, q, args)
		if none = errors.Is(err, ErrNoJob); none {
			return nil // commit the completion
		}
		return err
	})
	if err != nil {
		return Job{}, Run{}, false, err
	}
	if !lost {
		s.notify()
	}
	if none {
		return Job{}, Run{}, lost, ErrNoJob
	}
	return j, r, lost, nil
}

// claimIn claims with the claim query q (of claimQuery) in tx.
func (s *Store) claimIn(ctx context.Context, tx *sql.Tx, c Claimant, now int64, q string, args []any) (Job, Run, error) {
	j, err := scanJob(s.queryRow(ctx, tx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, Run{}, ErrNoJob
	}
	if err != nil {
		return Job{}, Run{}, fmt.Errorf("claim job: %w", err)
	}
	dir := filepath.Join(c.LogDir, j.ID)
	r := Run{JobID: j.ID, Attempt: j.Runs, WorkerID: c.WorkerID, Host: c.Host, PID: c.PID,
		StartedAt:  time.Unix(0, now).UTC(),
		StdoutPath: filepath.Join(dir, strconv.Itoa(j.Runs)+".out"),
		StderrPath: filepath.Join(dir, strconv.Itoa(j.Runs)+".err")}
	_, err = s.exec(ctx, tx, insertRun, r.JobID, r.Attempt, r.WorkerID, r.Host, r.PID, now, r.StdoutPath, r.StderrPath)
	if err != nil {
		return Job{}, Run{}, fmt.Errorf("record run: %w", err)
	}
	return j, r, nil
}

const insertRun = `INSERT INTO runs (job_id, attempt, worker_id, host, pid,
	started_at, stdout_path, stderr_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

func claimQuery(c Claimant, now int64) (string, []any) {
	filter, queueArgs := inQueues(c.Queues)
	args := append([]any{c.WorkerID, now + int64(c.Lease), now, now}, queueArgs...)
	return `UPDATE jobs SET state = 'processing', attempts = attempts + 1, runs = runs + 1,
		worker_id = ?, lease_until = ?, updated_at = ?
	WHERE seq = (
		SELECT seq FROM jobs INDEXED BY jobs_runnable
		WHERE state IN ('pending', 'failed') AND run_after <= ?` + filter + `
		ORDER BY priority DESC, run_after, seq LIMIT 1)
	RETURNING ` + jobColumns, args
}

// Started records the process group of a run, so that whoever recovers the
// run after a crash can kill what is left of it, and when its command
// started (Run.ExecAt).
func (s *Store) Started(ctx context.Context, r Run, pgid int) error {
	const q = "UPDATE runs SET pgid = ?, exec_at = ? WHERE job_id = ? AND attempt = ?"
	s.prepare(ctx, q)
	err := s.write(ctx, light, func(tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, q, pgid, s.now(), r.JobID, r.Attempt)
		return err
	})
	if err != nil {
		return fmt.Errorf("record run start: %w", err)
	}
	return nil
}

// Complete marks the run and its job completed. ErrLost: the run was
// recovered by another worker meanwhile, and the job is no longer ours.
func (s *Store) Complete(ctx context.Context, r Run) error {
	return s.finish(ctx, light, r, completeJob, completeArgs(r, s.now()), OutcomeCompleted, intPtr(0), "")
}

const completeJob = `UPDATE jobs SET state = 'completed', exit_code = 0,
	last_error = NULL, worker_id = NULL, lease_until = NULL, updated_at = ?, finished_at = ?
	WHERE id = ? AND state = 'processing' AND runs = ? AND worker_id = ?`

func completeArgs(r Run, now int64) []any {
	return []any{now, now, r.JobID, r.Attempt, r.WorkerID}
}

// Fail records a failed run of j (as claimed). The job waits
// backoff_base^attempts, capped at maxBackoff, or is dead when its attempts
// reach max_retries. It returns the job's new state.
func (s *Store) Fail(ctx context.Context, j Job, r Run, exitCode *int, errText string, maxBackoff time.Duration) (State, error) {
	now := s.Now()
	next := Failed
	if j.Attempts >= j.MaxRetries {
		next = Dead
	}
	runAfter := now.Add(Backoff(j.BackoffBase, j.Attempts, maxBackoff))
	// Durable: a dead job gets a dead/ file, and someone may act on the
	// failure; failures are rare enough to pay for the fsync.
	err := s.finish(ctx, durable, r, `UPDATE jobs SET state = ?, exit_code = ?, last_error = ?,
			run_after = ?, worker_id = NULL, lease_until = NULL, updated_at = ?,
			finished_at = CASE WHEN ? = 'dead' THEN ? END
			WHERE id = ? AND state = 'processing' AND runs = ? AND worker_id = ?`,
		[]any{string(next), exitCode, errText, runAfter.UnixNano(), now.UnixNano(),
			string(next), now.UnixNano(), r.JobID, r.Attempt, r.WorkerID}, OutcomeFailed, exitCode, errText)
	return next, err
}

// Release puts an interrupted run's job back to pending without counting the
// attempt, for a worker stopped by a second signal.
func (s *Store) Release(ctx context.Context, r Run, reason string) error {
	now := s.now()
	return s.finish(ctx, durable, r, `UPDATE jobs SET state = 'pending', attempts = attempts - 1,
			run_after = ?, worker_id = NULL, lease_until = NULL, updated_at = ?
			WHERE id = ? AND state = 'processing' AND runs = ? AND worker_id = ?`,
		[]any{now, now, r.JobID, r.Attempt, r.WorkerID}, OutcomeInterrupted, nil, reason)
}

// Postpone puts a job whose run could not start for a cause outside the job
// (its log directory unwritable, a full disk, no memory to fork) back to
// pending until until, without counting the attempt; reason becomes its
// last_error, so that status and show say why it waits.
func (s *Store) Postpone(ctx context.Context, r Run, reason string, until time.Time) error {
	now := s.now()
	return s.finish(ctx, durable, r, `UPDATE jobs SET state = 'pending', attempts = attempts - 1,
			last_error = ?, run_after = ?, worker_id = NULL, lease_until = NULL, updated_at = ?
			WHERE id = ? AND state = 'processing' AND runs = ? AND worker_id = ?`,
		[]any{reason, until.UnixNano(), now, r.JobID, r.Attempt, r.WorkerID}, OutcomeInterrupted, nil, reason)
}

// finish applies a job update owned by run r (the statement update with
// args) and closes the run record, in one transaction committed with
// durability d.
func (s *Store) finish(ctx context.Context, d durability, r Run, update string, args []any, outcome string, exitCode *int, errText string) error {
	s.prepare(ctx, update, endRunQuery)
	err := s.write(ctx, d, func(tx *sql.Tx) error {
		return s.finishIn(ctx, tx, r, update, args, s.now(), outcome, exitCode, errText)
	})
	if err == nil {
		s.notify()
	}
	return err
}

// finishIn is the transaction of finish: ErrLost when update (with args)
// changes no job.
func (s *Store) finishIn(ctx context.Context, tx *sql.Tx, r Run, update string, args []any, now int64, outcome string, exitCode *int, errText string) error {
	res, err := s.exec(ctx, tx, update, args...)
	if err != nil {
		return fmt.Errorf("finish job %s: %w", r.JobID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("finish job %s attempt %d: %w", r.JobID, r.Attempt, ErrLost)
	}
	return s.endRun(ctx, tx, r.JobID, r.Attempt, now, outcome, exitCode, errText)
}

const endRunQuery = `UPDATE runs SET ended_at = ?, outcome = ?, exit_code = ?, error = ?
	WHERE job_id = ? AND attempt = ?`

func (s *Store) endRun(ctx context.Context, tx *sql.Tx, jobID string, attempt int, now int64, outcome string, exitCode *int, errText string) error {
	_, err := s.exec(ctx, tx, endRunQuery, now, outcome, exitCode, nullString(errText), jobID, attempt)
	if err != nil {
		return fmt.Errorf("end run: %w", err)
	}
	return nil
}

// Backoff is how long a job waits after its n-th failed run: base^n seconds,
// capped at max.
func Backoff(base, n int, max time.Duration) time.Duration {
	d := time.Second
	for i := 0; i < n; i++ {
		if base > 0 && d > max/time.Duration(base) {
			return max // d*base would pass max, or overflow
		}
		d *= time.Duration(base)
		if d >= max || d <= 0 {
			return max
		}
	}
	return min(d, max)
}

func intPtr(n int) *int { return &n }

// HasWork reports whether any job in queues (all queues when empty) is
// runnable now or failed and waiting for its backoff: what a draining
// worker must still wait for. Jobs scheduled for later do not count.
func (s *Store) HasWork(ctx context.Context, queues []string) (bool, error) {
	q := `SELECT EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_runnable
		WHERE state IN ('pending', 'failed') AND (state = 'failed' OR run_after <= ?)`
	filter, queueArgs := inQueues(queues)
	args := append([]any{s.now()}, queueArgs...)
	var ok bool
	if err := s.queryRow(ctx, nil, q+filter+")", args...).Scan(&ok); err != nil {
		return false, fmt.Errorf("look for work: %w", err)
	}
	return ok, nil
}

// NextRunAfter returns when the first job in queues (all queues when empty)
// that waits for its not-before time (a delay, run_at, or a retry's
// backoff) becomes runnable; the zero time when none waits. An idle worker
// sleeps until then rather than until its next poll.
func (s *Store) NextRunAfter(ctx context.Context, queues []string) (time.Time, error) {
	filter, queueArgs := inQueues(queues)
	q := `SELECT min(run_after) FROM jobs INDEXED BY jobs_runnable
		WHERE state IN ('pending', 'failed') AND run_after > ?` + filter
	var next sql.NullInt64
	if err := s.queryRow(ctx, nil, q, append([]any{s.now()}, queueArgs...)...).Scan(&next); err != nil {
		return time.Time{}, fmt.Errorf("look for scheduled work: %w", err)
	}
	return fromNanos(next), nil
}

// inQueues is the SQL condition for "queue is one of queues" (true when
// queues is empty) and its arguments.
func inQueues(queues []string) (string, []any) {
	if len(queues) == 0 {
		return "", nil
	}
	args := make([]any, len(queues))
	for i, q := range queues {
		args[i] = q
	}
	return " AND queue IN (?" + strings.Repeat(", ?", len(queues)-1) + ")", args
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Claim is one UPDATE … RETURNING inside BEGIN IMMEDIATE: the subquery
// picks the job and the UPDATE takes it while the write lock shuts out
// every other connection, so no two claimants can read the same row as
// runnable.
//
// A read looks first: a slot is woken by every change of the store (a
// run's end, another slot's claim, an enqueue), and most wake-ups find
// nothing to claim. Finding nothing in a read costs no write lock and no
// commit, and keeps the writer free for the writes that wait for it. A job
// committed after the read wakes the slots again.
func (e *Engine) Claim(ctx context.Context, p claim.ClaimParams) (claim.Job, claim.Run, error) {
	var job claim.Job
	var run claim.Run
	cq, cargs := claimableQuery(p)
	var found bool
	if err := e.queryRow(ctx, nil, cq, cargs...).Scan(&found); err != nil {
		return job, run, fmt.Errorf("look for a job to claim: %w", e.fault(err))
	}
	if !found {
		return job, run, claim.ErrNoJob
	}
	q, args := claimQuery(p)
	e.prepare(ctx, q, insertRun)
	// Light: a claim a power cut takes back is a job pending again, and the
	// run it started died with the machine.
	err := e.write(ctx, light, func(tx *sql.Tx) (err error) {
		job, run, err = e.claimIn(ctx, tx, p, q, args)
		return err
	})
	return job, run, err
}

// CompleteAndClaim finishes done and claims next in one light transaction.
func (e *Engine) CompleteAndClaim(ctx context.Context, done claim.FinishParams, next claim.ClaimParams) (j claim.Job, r claim.Run, ended claim.State, err error) {
	q, args := claimQuery(next)
	fq, fargs := finishJob(done)
	e.prepare(ctx, fq, endRunQuery, q, insertRun, countDownDependents, markDepsMet)
	var none bool
	err = e.write(ctx, light, func(tx *sql.Tx) error {
		var err error
		if ended, err = e.finishIn(ctx, tx, done, fq, fargs); err != nil && !errors.Is(err, claim.ErrLost) {
			return err
		}
		j, r, err = e.claimIn(ctx, tx, next, q, args)
		if none = errors.Is(err, claim.ErrNoJob); none {
			return nil // commit the completion
		}
		return err
	})
	if err != nil {
		return claim.Job{}, claim.Run{}, "", err
	}
	if ended != "" {
		e.notify()
	}
	if none {
		return claim.Job{}, claim.Run{}, ended, claim.ErrNoJob
	}
	return j, r, ended, nil
}

// claimIn claims with the claim query q (of claimQuery) in tx.
func (e *Engine) claimIn(ctx context.Context, tx *sql.Tx, p claim.ClaimParams, q string, args []any) (claim.Job, claim.Run, error) {
	j, err := claim.ScanJob(e.queryRow(ctx, tx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return claim.Job{}, claim.Run{}, claim.ErrNoJob
	}
	if err != nil {
		return claim.Job{}, claim.Run{}, fmt.Errorf("claim job: %w", err)
	}
	r := claim.NewRun(p.Claimant, j, p.Now)
	_, err = e.exec(ctx, tx, insertRun, r.JobID, r.Attempt, r.WorkerID, r.Host, r.PID, p.Now.UnixNano(), r.StdoutPath, r.StderrPath)
	if err != nil {
		return claim.Job{}, claim.Run{}, fmt.Errorf("record run: %w", err)
	}
	return j, r, nil
}

const insertRun = `INSERT INTO runs (job_id, attempt, worker_id, host, pid,
	started_at, stdout_path, stderr_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

func claimQuery(p claim.ClaimParams) (string, []any) {
	now := p.Now.UnixNano()
	filter, queueArgs := inQueues(p.Queues)
	args := append([]any{p.WorkerID, now + int64(p.Lease), now, now}, queueArgs...)
	return `UPDATE jobs SET state = 'processing', attempts = attempts + 1, runs = runs + 1,
		worker_id = ?, lease_until = ?, updated_at = ?
	WHERE seq = (
		SELECT seq FROM jobs WHERE seq IN (
			SELECT (SELECT j.seq FROM jobs j INDEXED BY jobs_queue_runnable
				WHERE ` + runnableJob + `
				ORDER BY j.priority DESC, j.run_after, j.seq LIMIT 1)
			FROM (` + runnableQueues + filter + `) r)
		ORDER BY priority DESC, run_after, seq LIMIT 1)
	RETURNING ` + jobColumns, args
}

// claimableQuery reads whether claimQuery(p) would find a job.
func claimableQuery(p claim.ClaimParams) (string, []any) {
	filter, queueArgs := inQueues(p.Queues)
	return `SELECT EXISTS (SELECT 1 FROM (` + runnableQueues + filter + `) r
		WHERE EXISTS (SELECT 1 FROM jobs j INDEXED BY jobs_queue_runnable WHERE ` + runnableJob + `))`,
		append(queueArgs, p.Now.UnixNano())
}

// runnableJob is a job of queue r.queue that a claim may take at the time
// its one parameter gives; claimQuery and claimableQuery share it, so that
// the read before a claim finds what the claim would.
const runnableJob = `j.queue = r.queue AND j.state IN ('pending', 'failed') AND j.waiting = 0 AND j.run_after <= ?`

// runnableQueues selects the queues a claim may take a job from: those
// with pending or failed jobs, neither paused nor at their limit. The claim
// reads each one's first job in order (jobs_queue_runnable) and takes the
// best of those, so a backlog it may not take is never read. Pauses and
// limits are part of the claim statement itself, so they hold for every
// claim that commits after them, in any process.
const runnableQueues = unpausedQueues + underLimit

// unpausedQueues selects the queues with pending or failed jobs that are
// not paused: those HasWork and NextRunAfter look at. A queue at its limit
// still has work, which a draining worker waits for.
const unpausedQueues = `SELECT DISTINCT queue FROM queue_counts
			WHERE state IN ('pending', 'failed') AND n > 0
			AND NOT EXISTS (SELECT 1 FROM paused_queues WHERE queue = '*')
			AND queue NOT IN (SELECT queue FROM paused_queues)`

// Started records the process group of a run and when its command started.
func (e *Engine) Started(ctx context.Context, r claim.Run, pgid int, at time.Time) error {
	const q = "UPDATE runs SET pgid = ?, exec_at = ?, confined = ? WHERE job_id = ? AND attempt = ?"
	e.prepare(ctx, q)
	err := e.write(ctx, light, func(tx *sql.Tx) error {
		_, err := e.exec(ctx, tx, q, pgid, at.UnixNano(), claim.NullString(r.Confined), r.JobID, r.Attempt)
		return err
	})
	if err != nil {
		return fmt.Errorf("record run start: %w", err)
	}
	return nil
}

// finishJob returns the statement that moves the job of a run that ends,
// as p says, and its arguments: only while the run is the current one of
// the processing job, of its worker. It sets only the columns p changes, so
// that each kind of ending (a completion above all) runs the statement it
// would have on its own; each is prepared once.
func finishJob(p claim.FinishParams) (string, []any) {
	now := p.Now.UnixNano()
	shape := 0
	args := make([]any, 0, 10)
	args = append(args, string(p.State))
	if p.Uncount {
		shape |= finishUncount
	}
	if p.SetExitCode {
		shape |= finishExitCode
		args = append(args, p.ExitCode)
	}
	if p.SetError {
		shape |= finishError
		args = append(args, claim.NullString(p.Error))
	}
	if !p.RunAfter.IsZero() {
		shape |= finishRunAfter
		args = append(args, p.RunAfter.UnixNano())
	}
	var finished sql.NullInt64
	if p.Finished {
		finished = sql.NullInt64{Int64: now, Valid: true}
	}
	return finishJobs[shape], append(args, now, finished, now, p.Run.JobID, p.Run.Attempt, p.Run.WorkerID)
}

// The parts of finishJob's statement that not every ending has.
const (
	finishUncount = 1 << iota
	finishExitCode
	finishError
	finishRunAfter
)

// finishJobs holds finishJob's statement for each combination of its parts.
// A job that `cancel` marked (cancel_at) ends canceled whatever state the
// Store asked for, in the same statement, so that a cancel committed while
// the job was unfinished wins every race with the end of its run; the
// statement returns the state it set.
var finishJobs = func() (qs [16]string) {
	for shape := range qs {
		q := "UPDATE jobs SET state = CASE WHEN cancel_at IS NULL THEN ? ELSE 'canceled' END"
		if shape&finishUncount != 0 {
			q += ", attempts = attempts - 1"
		}
		if shape&finishExitCode != 0 {
			q += ", exit_code = ?"
		}
		if shape&finishError != 0 {
			q += ", last_error = ?"
		}
		if shape&finishRunAfter != 0 {
			q += ", run_after = ?"
		}
		qs[shape] = q + `, worker_id = NULL, lease_until = NULL, updated_at = ?,
		finished_at = CASE WHEN cancel_at IS NULL THEN ? ELSE ? END
	WHERE id = ? AND state = 'processing' AND runs = ? AND worker_id = ?
	RETURNING state`
	}
	return qs
}()

// Finish applies p in one transaction, durable or light as p says, and
// returns the job's new state.
func (e *Engine) Finish(ctx context.Context, p claim.FinishParams) (claim.State, error) {
	q, args := finishJob(p)
	e.prepare(ctx, q, endRunQuery)
	if p.State == claim.Completed {
		e.prepare(ctx, countDownDependents, markDepsMet)
	}
	d := light
	if p.Durable {
		d = durable
	}
	var next claim.State
	err := e.write(ctx, d, func(tx *sql.Tx) (err error) {
		next, err = e.finishIn(ctx, tx, p, q, args)
		return err
	})
	if err == nil {
		e.notify()
	}
	return next, err
}

// finishIn is the transaction of Finish, with q and args of finishJob(p):
// ErrLost when the job is no longer the run's.
func (e *Engine) finishIn(ctx context.Context, tx *sql.Tx, p claim.FinishParams, q string, args []any) (claim.State, error) {
	var next claim.State
	err := e.queryRow(ctx, tx, q, args...).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("finish job %s attempt %d: %w", p.Run.JobID, p.Run.Attempt, claim.ErrLost)
	}
	if err != nil {
		return "", fmt.Errorf("finish job %s: %w", p.Run.JobID, err)
	}
	if next == claim.Completed {
		if err := e.dependencyMet(ctx, tx, p.Run.JobID); err != nil {
			return "", err
		}
	}
	return next, e.endRun(ctx, tx, p.Run, p.Now, p.Outcome, p.ExitCode, p.Error)
}

// dependencyMet counts down the jobs waiting for id, which completed: one
// probe of the deps key when nothing waits for it, which is nearly always.
func (e *Engine) dependencyMet(ctx context.Context, tx *sql.Tx, id string) error {
	res, err := e.exec(ctx, tx, countDownDependents, id)
	if err != nil {
		return fmt.Errorf("count down the dependents of %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	if _, err := e.exec(ctx, tx, markDepsMet, id); err != nil {
		return fmt.Errorf("count down the dependents of %s: %w", id, err)
	}
	return nil
}

const countDownDependents = `UPDATE jobs SET waiting = waiting - 1
	WHERE id IN (SELECT job_id FROM deps WHERE after_id = ? AND met = 0)`

const markDepsMet = `UPDATE deps SET met = 1 WHERE after_id = ? AND met = 0`

// endRunQuery ends a run. It records the run's start too (Started), where
// the run carries it: a short run's start is kept with its end, in one
// write instead of two.
const endRunQuery = `UPDATE runs SET ended_at = ?, outcome = ?, exit_code = ?, error = ?,
	stdout_size = ?, stderr_size = ?, stdout_tail = ?, stderr_tail = ?,
	pgid = coalesce(?, pgid), exec_at = coalesce(?, exec_at), confined = coalesce(?, confined)
	WHERE job_id = ? AND attempt = ?`

func (e *Engine) endRun(ctx context.Context, tx *sql.Tx, r claim.Run, now time.Time, outcome string, exitCode *int, errText string) error {
	t := r.Tails.TailColumns()
	pgid, execAt, confined := r.StartColumns()
	_, err := e.exec(ctx, tx, endRunQuery, now.UnixNano(), outcome, exitCode, claim.NullString(errText),
		t[0], t[1], t[2], t[3], pgid, execAt, confined, r.JobID, r.Attempt)
	if err != nil {
		return fmt.Errorf("end run: %w", err)
	}
	return nil
}

// HasWork looks for a job runnable now or failed and waiting.
func (e *Engine) HasWork(ctx context.Context, queues []string, now time.Time) (bool, error) {
	var ok bool
	q, args := hasWorkQuery(queues, now)
	if err := e.queryRow(ctx, nil, q, args...).Scan(&ok); err != nil {
		return false, fmt.Errorf("look for work: %w", err)
	}
	return ok, nil
}

func hasWorkQuery(queues []string, now time.Time) (string, []any) {
	filter, queueArgs := inQueues(queues)
	return `SELECT EXISTS (SELECT 1 FROM (` + unpausedQueues + filter + `) r
		WHERE EXISTS (SELECT 1 FROM jobs j INDEXED BY jobs_queue_runnable
			WHERE j.queue = r.queue AND j.state IN ('pending', 'failed') AND j.waiting = 0
			AND (j.state = 'failed' OR j.run_after <= ?)))`, append(queueArgs, now.UnixNano())
}

// NextRunAfter finds the earliest not-before time still to come.
func (e *Engine) NextRunAfter(ctx context.Context, queues []string, now time.Time) (time.Time, error) {
	var next sql.NullInt64
	q, args := nextRunAfterQuery(queues, now)
	if err := e.queryRow(ctx, nil, q, args...).Scan(&next); err != nil {
		return time.Time{}, fmt.Errorf("look for scheduled work: %w", err)
	}
	return claim.FromNanos(next), nil
}

func nextRunAfterQuery(queues []string, now time.Time) (string, []any) {
	filter, queueArgs := inQueues(queues)
	return `SELECT min(run_after) FROM jobs INDEXED BY jobs_queue_runnable
		WHERE state IN ('pending', 'failed') AND waiting = 0 AND run_after > ?
		AND queue IN (` + unpausedQueues + filter + `)`, append([]any{now.UnixNano()}, queueArgs...)
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

package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
)

// claimQuery is the claim, River's shape: the CTE picks the first runnable
// job in claim order and locks it, skipping rows other claimants hold
// locked, the UPDATE takes it and the INSERT records its run, in one
// statement. A concurrent claimant cannot take the same row (it is locked
// until this transaction ends) and does not wait for it either (SKIP
// LOCKED): it takes the next. The run's log paths are claim.NewRun's,
// spelt in SQL from the prefix $6 (logPrefix).
//
// The pick reads, for each queue it may take from (runnableQueues), that
// queue's first job it can lock (jobs_queue_runnable, one index probe a
// queue), and keeps the best of those: so it costs the same at any number
// of jobs, and a backlog it may not take (another queue, a paused one, one
// at its limit) is never read. The other queues' heads it locked are free
// again when the claim commits, a moment later.
const claimQuery = `WITH next AS (
	SELECT h.seq FROM (` + runnableQueues + queueHeads + `),` + claimTake

// claimQueuesQuery is claimQuery for the queues $7 only.
const claimQueuesQuery = `WITH next AS (
	SELECT h.seq FROM (` + runnableQueues + ` AND queue = ANY($7)` + queueHeads + `),` + claimTake

// runnableQueues selects the queues a claim may take from: with pending or
// failed jobs (queue_counts' shards summed), neither paused nor at their
// limit. Pauses and limits are part of the claim statement itself, so they
// hold for every claim that commits after them, on any host.
const runnableQueues = unpausedQueues + underLimit

// unpausedQueues selects the queues with pending or failed jobs that are
// not paused, before the GROUP BY of queueHeads or haveJobs: those HasWork
// and NextRunAfter look at. A queue at its limit still has work, which a
// draining worker waits for.
const unpausedQueues = `SELECT queue FROM queue_counts
		WHERE state IN ('pending', 'failed')` + notPaused

// haveJobs ends unpausedQueues for HasWork and NextRunAfter, $2 the queues
// asked for (none: all).
const haveJobs = `
		AND (coalesce(cardinality($2::text[]), 0) = 0 OR queue = ANY($2))
		GROUP BY queue HAVING sum(n) > 0`

// queueHeads ends the claim's pick after runnableQueues: each queue's first
// job it can lock, then the best of them.
const queueHeads = `
		GROUP BY queue HAVING sum(n) > 0) q
	CROSS JOIN LATERAL (
		SELECT seq, priority, run_after FROM jobs
		WHERE jobs.queue = q.queue AND state IN ('pending', 'failed') AND waiting = 0 AND run_after <= $1
		ORDER BY priority DESC, run_after, seq
		LIMIT 1
		FOR UPDATE SKIP LOCKED) h
	ORDER BY h.priority DESC, h.run_after, h.seq
	LIMIT 1`

// claimTake is the rest of a claim once next has picked the row.
const claimTake = `
taken AS (
	UPDATE jobs SET state = 'processing', attempts = attempts + 1, runs = runs + 1,
		worker_id = $2, lease_until = $3, updated_at = $1
	FROM next WHERE jobs.seq = next.seq
	RETURNING ` + jobColumnsQualified + `),
run AS (
	INSERT INTO runs (job_id, attempt, worker_id, host, pid, started_at, stdout_path, stderr_path)
	SELECT taken.id, taken.runs, $2, $4, $5, $1,
		$6 || taken.id || '/' || taken.runs || '.out', $6 || taken.id || '/' || taken.runs || '.err'
	FROM taken)
SELECT * FROM taken`

// underLimit is the claim's condition that a job's queue has room: fewer
// of its jobs processing than its limit (queue_limits). Claims run READ
// COMMITTED in parallel, so a count read by two of them at once could let
// both take a queue's last slot: while any queue has a limit, every claim
// transaction first takes one advisory lock (claimLock), which it holds
// until it commits, so each claim reads the counts its predecessors
// committed. Without limits, claims take no lock and run side by side.
const underLimit = `
	AND queue NOT IN (SELECT l.queue FROM queue_limits l
		WHERE l.max_running > 0 AND l.max_running <= (SELECT coalesce(sum(c.n), 0) FROM queue_counts c
			WHERE c.queue = l.queue AND c.state = 'processing'))`

// claimLock, part of the first statement of a claim's transaction
// (genericPlansLocked), takes the claim lock if any queue has a limit
// (underLimit). Being in a statement before the claim's, it ends before the
// claim's statement takes its snapshot.
const claimLock = `SELECT pg_advisory_xact_lock($1) FROM queue_limits WHERE max_running > 0 LIMIT 1`

// logPrefix is what claimQuery puts before "<id>/<attempt>.out" to make
// claim.NewRun's paths: filepath.Join of the log directory, the id (a
// plain name, claim.ValidID) and the file.
func logPrefix(dir string) string {
	switch dir = filepath.Clean(dir); dir {
	case ".":
		return ""
	case "/":
		return dir
	}
	return dir + "/"
}

// queueClaim queues the claim of p in b.
func queueClaim(b *pgx.Batch, p claim.ClaimParams) {
	now := p.Now.UnixNano()
	args := []any{now, p.WorkerID, now + int64(p.Lease), p.Host, p.PID, logPrefix(p.LogDir)}
	if len(p.Queues) > 0 {
		b.Queue(claimQueuesQuery, append(args, p.Queues)...)
		return
	}
	b.Queue(claimQuery, args...)
}

// Claim takes the next job: one durable transaction, one round trip,
// shared with the other writes of the slots in flight (batch.go).
// Durable, unlike SQLite's: the server is a failure domain of its own, and
// a claim its crash took back would be a job that another host claims
// again while this one runs it (SPEC §6).
func (e *Engine) Claim(ctx context.Context, p claim.ClaimParams) (claim.Job, claim.Run, error) {
	req := &request{ctx: ctx, claim: &p}
	e.commit(req)
	return req.j, req.r, req.claimErr
}

// CompleteAndClaim finishes done and claims next in one durable
// transaction (as Claim is, and shared as Claim's is): the finish comes
// before the claim. A finish that matches no row (lost) changes nothing
// and the claim goes on, a claim that finds no job commits the finish.
func (e *Engine) CompleteAndClaim(ctx context.Context, done claim.FinishParams, next claim.ClaimParams) (j claim.Job, r claim.Run, ended claim.State, err error) {
	req := &request{ctx: ctx, finish: &done, claim: &next}
	e.commit(req)
	if req.finishErr != nil && !errors.Is(req.finishErr, claim.ErrLost) {
		return claim.Job{}, claim.Run{}, "", req.finishErr
	}
	if errors.Is(req.claimErr, claim.ErrNoJob) {
		return claim.Job{}, claim.Run{}, req.ended, req.claimErr
	}
	if req.claimErr != nil {
		return claim.Job{}, claim.Run{}, "", req.claimErr
	}
	return req.j, req.r, req.ended, nil
}

// Started records the process group of a run and when its command started,
// in one light round trip: no one acts on it but a reaper, which finds the
// run's processes by their QUEUECTL_RUN mark as well, and a crash of the
// server that takes it back leaves the run as claimed.
func (e *Engine) Started(ctx context.Context, r claim.Run, pgid int, at time.Time) error {
	err := e.sendLight(ctx, func(b *pgx.Batch) {
		b.Queue("UPDATE runs SET pgid = $1, exec_at = $2, confined = $3 WHERE job_id = $4 AND attempt = $5",
			pgid, at.UnixNano(), claim.NullString(r.Confined), r.JobID, r.Attempt)
	}, func(br pgx.BatchResults) error {
		_, err := br.Exec()
		return err
	})
	if err != nil {
		return fmt.Errorf("record run start: %w", err)
	}
	return nil
}

// finishQuery moves the job of a run that ends, as FinishParams says, and
// closes the run, in one statement: only while the run is the current one
// of the processing job, of its worker (else no row comes back: ErrLost,
// and the run, ended by whoever recovered it, is left alone). A job that
// completed marks its dependents' rows met and counts their waiting down
// (a probe of the deps key when nothing waits for it, which is nearly
// always). It wakes the listeners when it commits.
//
// The run's row is named by its key from the parameters, not by a join
// with job: pgx prepares the statement on each connection, and after five
// executions the server keeps one generic plan, made from what it knew of
// the tables then, for the connection's life. A worker's first finishes
// find runs nearly empty, and never analyzed without autovacuum; the plan
// made then for the join read every run (a sequential scan, or the key's
// second column), and each finish read more as the table grew (DECISIONS:
// "The finish named its run by a join"). The key's two columns from
// parameters are one probe of runs_pkey in any plan (plan_test.go).
const finishQuery = `WITH job AS (
	UPDATE jobs SET state = CASE WHEN cancel_at IS NULL THEN $1 ELSE 'canceled' END, attempts = attempts - $2,
		exit_code = CASE WHEN $3::boolean THEN $4::integer ELSE exit_code END,
		last_error = CASE WHEN $5::boolean THEN $6::text ELSE last_error END,
		run_after = coalesce($7, run_after), worker_id = NULL, lease_until = NULL,
		updated_at = $8, finished_at = CASE WHEN cancel_at IS NULL THEN $9::bigint ELSE $8::bigint END
	WHERE id = $10 AND state = 'processing' AND runs = $11 AND worker_id = $12
	RETURNING id, state),
run AS (
	UPDATE runs SET ended_at = $8, outcome = $13, exit_code = $4, error = $6,
		stdout_size = $15, stderr_size = $16, stdout_tail = $17, stderr_tail = $18,
		pgid = coalesce($19::integer, pgid), exec_at = coalesce($20::bigint, exec_at),
		confined = coalesce($21::text, confined)
	FROM job WHERE runs.job_id = $10 AND runs.attempt = $11),
met AS (
	UPDATE deps SET met = true FROM job
	WHERE job.state = 'completed' AND deps.after_id = job.id AND NOT deps.met
	RETURNING deps.job_id),
counted AS (
	UPDATE jobs SET waiting = waiting - 1 FROM met WHERE jobs.id = met.job_id)
SELECT job.state FROM job, pg_notify($14, '') AS wake`

// queueFinish queues the statement of p in b.
func (e *Engine) queueFinish(b *pgx.Batch, p claim.FinishParams) {
	now := p.Now.UnixNano()
	var finished sql.NullInt64
	if p.Finished {
		finished = sql.NullInt64{Int64: now, Valid: true}
	}
	uncount := 0
	if p.Uncount {
		uncount = 1
	}
	t := p.Run.Tails.TailColumns()
	pgid, execAt, confined := p.Run.StartColumns()
	b.Queue(finishQuery, string(p.State), uncount, p.SetExitCode, p.ExitCode, p.SetError,
		claim.NullString(p.Error), claim.Nanos(p.RunAfter), now, finished, p.Run.JobID, p.Run.Attempt, p.Run.WorkerID,
		p.Outcome, e.channel, t[0], t[1], t[2], t[3], pgid, execAt, confined)
}

// readFinish reads the result of queueFinish: the job's new state, or
// ErrLost when the job is no longer the run's.
func readFinish(br pgx.BatchResults, p claim.FinishParams) (claim.State, error) {
	var next string
	err := br.QueryRow().Scan(&next)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("finish job %s attempt %d: %w", p.Run.JobID, p.Run.Attempt, claim.ErrLost)
	}
	if err != nil {
		return "", fmt.Errorf("finish job %s: %w", p.Run.JobID, err)
	}
	return claim.State(next), nil
}

// Finish applies p in one statement of a group's durable transaction
// (batch.go) and returns the job's new state: canceled, whatever p says,
// for a job that `cancel` marked. It is durable whatever p says: a worker
// acts on the end of a run (hooks, dependents, its next claim), and a
// completion a crash of the server took back would be a job processing
// under a worker that no longer runs it.
func (e *Engine) Finish(ctx context.Context, p claim.FinishParams) (claim.State, error) {
	req := &request{ctx: ctx, finish: &p}
	e.commit(req)
	return req.ended, req.finishErr
}

// HasWork looks for a job runnable now or failed and waiting, one probe of
// jobs_queue_runnable a queue.
func (e *Engine) HasWork(ctx context.Context, queues []string, now time.Time) (bool, error) {
	var ok bool
	err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM (`+unpausedQueues+haveJobs+`) q
		WHERE EXISTS (SELECT 1 FROM jobs WHERE jobs.queue = q.queue
			AND state IN ('pending', 'failed') AND waiting = 0 AND (state = 'failed' OR run_after <= $1)))`,
		now.UnixNano(), queues).Scan(&ok)
	if err != nil {
		return false, classify(fmt.Errorf("look for work: %w", err))
	}
	return ok, nil
}

// NextRunAfter finds the earliest not-before time still to come.
func (e *Engine) NextRunAfter(ctx context.Context, queues []string, now time.Time) (time.Time, error) {
	var next sql.NullInt64
	err := e.pool.QueryRow(ctx, `SELECT min(run_after) FROM jobs
		WHERE state IN ('pending', 'failed') AND waiting = 0 AND run_after > $1
		AND queue IN (`+unpausedQueues+haveJobs+`)`, now.UnixNano(), queues).Scan(&next)
	if err != nil {
		return time.Time{}, classify(fmt.Errorf("look for scheduled work: %w", err))
	}
	return claim.FromNanos(next), nil
}

package claim

import (
	"context"
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
// claim is one statement that no other claimant, in any process, can
// interleave with (see the engine), so no two claimants take the same job.
// A job of a queue that has as many jobs processing as its limit
// (SetQueueLimit) is not runnable. It returns ErrNoJob when nothing is
// runnable.
func (s *Store) Claim(ctx context.Context, c Claimant) (Job, Run, error) {
	return s.engine.Claim(ctx, ClaimParams{Claimant: c, Now: s.Now()})
}

// CompleteAndClaim is Complete(done) and then Claim(c), in one transaction:
// a busy slot's one write per job instead of two. ended is done's job's new
// state, as Complete returns it, or "" when done had been recovered
// meanwhile (Complete's ErrLost): its result is dropped, and the claim
// happens all the same. The error is ErrNoJob when nothing is runnable,
// with done ended all the same; any other error means that nothing was
// recorded.
func (s *Store) CompleteAndClaim(ctx context.Context, done Run, c Claimant) (j Job, r Run, ended State, err error) {
	now := s.Now()
	return s.engine.CompleteAndClaim(ctx, completed(done, endOf(done, now)), ClaimParams{Claimant: c, Now: now})
}

// endOf is when run r ended, for a run that ends now: r.EndedAt, when its
// worker says when its processes were gone (a store that hung meanwhile
// took the end's write seconds later), else now. The run's end, its job's
// finish and updated_at (which tell the two apart from a later change),
// and a retry's backoff all count from it.
func endOf(r Run, now time.Time) time.Time {
	if r.EndedAt.IsZero() || r.EndedAt.After(now) || r.EndedAt.Before(r.StartedAt) {
		return now
	}
	return r.EndedAt
}

// Started records the process group of a run, so that whoever recovers the
// run after a crash can kill what is left of it, and when its command
// started: r.ExecAt, or now when it is zero. A run that carries its start
// (PGID, ExecAt, Confined) has it recorded with its end as well, by every
// end of a run; a worker records it on its own only for a run that goes on
// (run.startRecordDelay).
func (s *Store) Started(ctx context.Context, r Run, pgid int) error {
	at := r.ExecAt
	if at.IsZero() {
		at = s.Now()
	}
	return s.engine.Started(ctx, r, pgid, at)
}

// Complete marks the run and its job completed, and keeps r.Tails with
// the run, as every end of a run does (Fail, Release, Postpone,
// EndCanceled, CompleteAndClaim): cut to their last TailBytes. ErrLost: the run was
// recovered by another worker meanwhile, and the job is no longer ours.
// It returns the job's new state: Completed, or Canceled when `cancel`
// marked the job while it ran (the cancel wins every end of a run).
func (s *Store) Complete(ctx context.Context, r Run) (State, error) {
	return s.engine.Finish(ctx, completed(r, endOf(r, s.Now())))
}

// completed is the end of a successful run. Light: a completion a power cut
// takes back is a job that runs again.
// r.Error, when set, says what went wrong around the run though it
// succeeded (its output was lost to a full disk): kept as the run's error
// and the job's last_error.
func completed(r Run, now time.Time) FinishParams {
	return FinishParams{Run: ending(r), State: Completed, SetExitCode: true, SetError: true, ExitCode: intPtr(0),
		Error: r.Error, Finished: true, Outcome: OutcomeCompleted, Now: now}
}

// Fail records a failed run of j (as claimed). The job waits
// backoff_base^attempts, capped at maxBackoff, or is dead when its attempts
// reach max_retries; canceled, when `cancel` was asked of it meanwhile (a
// cancel committed while the job is unfinished always wins). It returns
// the job's new state.
func (s *Store) Fail(ctx context.Context, j Job, r Run, exitCode *int, errText string, maxBackoff time.Duration) (State, error) {
	now := endOf(r, s.Now())
	next := Failed
	if j.Attempts >= j.MaxRetries {
		next = Dead
	}
	return s.fail(ctx, r, exitCode, errText, next, now.Add(Backoff(j.BackoffBase, j.Attempts, maxBackoff)), now)
}

// FailForGood is Fail for a run that no attempt could make succeed (a
// limit above what the worker's host allows): the job is dead at once,
// whatever attempts it has left, so that `dlq retry` re-drives it once the
// cause is fixed; canceled, as with Fail, when a cancel came first.
func (s *Store) FailForGood(ctx context.Context, r Run, exitCode *int, errText string) (State, error) {
	now := endOf(r, s.Now())
	return s.fail(ctx, r, exitCode, errText, Dead, now, now)
}

// fail ends run r as failed, its job next. Durable: a dead job gets a
// dead/ file, and someone may act on the failure; failures are rare enough
// to pay for the fsync.
func (s *Store) fail(ctx context.Context, r Run, exitCode *int, errText string, next State, runAfter, now time.Time) (State, error) {
	return s.engine.Finish(ctx, FinishParams{Run: ending(r), State: next, SetExitCode: true, SetError: true, ExitCode: exitCode,
		Error: errText, RunAfter: runAfter, Finished: next == Dead, Outcome: OutcomeFailed, Durable: true, Now: now})
}

// Release puts an interrupted run's job back to pending without counting the
// attempt, for a worker stopped by a second signal (canceled, when `cancel`
// was asked of it meanwhile).
func (s *Store) Release(ctx context.Context, r Run, reason string) error {
	now := s.Now()
	_, err := s.engine.Finish(ctx, FinishParams{Run: ending(r), State: Pending, Uncount: true, Error: reason,
		RunAfter: now, Outcome: OutcomeInterrupted, Durable: true, Now: now})
	return err
}

// Postpone puts a job whose run could not start for a cause outside the job
// (its log directory unwritable, a full disk, no memory to fork) back to
// pending until until, without counting the attempt; reason becomes its
// last_error, so that status and show say why it waits (canceled, when
// `cancel` was asked of it meanwhile).
func (s *Store) Postpone(ctx context.Context, r Run, reason string, until time.Time) error {
	_, err := s.engine.Finish(ctx, FinishParams{Run: ending(r), State: Pending, Uncount: true, SetError: true, Error: reason,
		RunAfter: until, Outcome: OutcomeInterrupted, Durable: true, Now: s.Now()})
	return err
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

// ending is run r as its end is stored: with its tails, if it has any, cut
// to what the store keeps (Tails.Kept).
func ending(r Run) Run {
	r.Tails = r.Tails.Kept()
	return r
}

// HasWork reports whether any job in queues (all queues when empty, paused
// ones never) is
// runnable now or failed and waiting for its backoff: what a draining
// worker must still wait for. Jobs scheduled for later do not count.
func (s *Store) HasWork(ctx context.Context, queues []string) (bool, error) {
	return s.engine.HasWork(ctx, queues, s.Now())
}

// NextRunAfter returns when the first job in queues (all queues when empty)
// that waits for its not-before time (a delay, run_at, or a retry's
// backoff) becomes runnable; the zero time when none waits. An idle worker
// sleeps until then rather than until its next poll.
func (s *Store) NextRunAfter(ctx context.Context, queues []string) (time.Time, error) {
	return s.engine.NextRunAfter(ctx, queues, s.Now())
}

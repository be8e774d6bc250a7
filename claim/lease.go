package claim

import (
	"context"
	"fmt"
	"time"
)

// InFlight is a processing job's current run, as a reaper sees it.
type InFlight struct {
	Run
	LeaseUntil time.Time
}

// InFlight returns the current run of every processing job.
func (s *Store) InFlight(ctx context.Context) ([]InFlight, error) {
	return s.engine.InFlight(ctx)
}

// Renew extends the lease on every job the worker is running, and records
// the worker's heartbeat. It returns the runs it renewed, which are all the
// store assigns to the worker, and whether `worker stop` asked the worker
// to stop. It commits durably: a renewal a crash of the server could take
// back would leave the worker running a job on a lease that other hosts
// see lapse sooner.
func (s *Store) Renew(ctx context.Context, workerID string, lease time.Duration) (Renewal, error) {
	now := s.Now()
	return s.engine.Renew(ctx, RenewParams{WorkerID: workerID, LeaseUntil: now.Add(lease), Now: now})
}

// Recover makes a lost run's job runnable again without counting the lost
// run as a failed attempt; after MaxLost losses the job is dead. Only the
// current run of a processing job can be recovered, so of several reapers
// racing for one run exactly one wins; the others get ErrLost. It returns
// the job's new state. f.Tails, when the reaper could read the run's files
// (on the run's host), are kept with the run.
func (s *Store) Recover(ctx context.Context, f InFlight) (State, error) {
	return s.engine.Recover(ctx, RecoverParams{JobID: f.JobID, Attempt: f.Attempt, Tails: f.Tails.Kept(), MaxLost: MaxLost,
		DeadError: fmt.Sprintf("worker lost %d times", MaxLost), Now: s.Now()})
}

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

// Renew extends the lease on every job worker w is running, and records
// the worker's heartbeat. It returns the runs it renewed, which are all the
// store assigns to the worker, and whether `worker stop` asked the worker
// to stop. It commits durably: a renewal a crash of the server could take
// back would leave the worker running a job on a lease that other hosts
// see lapse sooner.
//
// A worker whose row is gone from the registry (another host's reaper took
// it for dead while it could not reach the store) is registered again as w
// says (w.StartedAt kept), and Renewal.Registered says so: else status,
// `worker stop` and every check for a live worker would miss a worker that
// runs on. The registration gives the worker no job back: runs recovered
// meanwhile are not among those renewed, and the worker stops them.
func (s *Store) Renew(ctx context.Context, w WorkerInfo, lease time.Duration) (Renewal, error) {
	now := s.Now()
	w.HeartbeatAt = now.UTC()
	if w.StartedAt.IsZero() {
		w.StartedAt = w.HeartbeatAt
	}
	return s.engine.Renew(ctx, RenewParams{Worker: w, LeaseUntil: now.Add(lease), Now: now})
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

package claim

import (
	"context"
	"fmt"
)

// Restart makes a completed, dead or canceled job pending again, as new
// runs: attempts and lost runs back to 0, its last result and its cancel
// forgotten. Its earlier runs stay in its history and new runs number on
// from them, so no log is overwritten. It may run at once, or at its
// run_at when that is still ahead (canceled before it ran). The caller
// removes a dead job's
// dead/ file. Errors: ErrNotFound; ErrConflict for an unfinished job, or
// one whose unique_key another pending, processing or failed job holds.
func (s *Store) Restart(ctx context.Context, id string) (Job, error) {
	j, _, err := s.RestartChain(ctx, id)
	return j, err
}

// RestartChain is Restart that also says what it did to the jobs that
// id's death or cancel made dead (see Rearmed). A completed job's
// dependents that have not started (pending, held) wait for its new run,
// as they waited for the first; those that ran already are left as they
// are.
func (s *Store) RestartChain(ctx context.Context, id string) (Job, Rearmed, error) {
	jobs, changed, r, err := s.engine.Restart(ctx, RestartParams{ID: id, Now: s.Now()})
	if err != nil {
		return Job{}, Rearmed{}, err
	}
	if !changed {
		return Job{}, Rearmed{}, notFinishedError(id, jobs[0].State, "restart it once it has ended (queuectl wait), or cancel it first")
	}
	return jobs[0], r, nil
}

// RestartAll restarts every job in state (completed, dead or canceled) and
// returns them. Like RetryAll, it leaves a job whose unique_key a live job
// holds (or an older job of the batch took) as it was.
func (s *Store) RestartAll(ctx context.Context, state State) ([]Job, error) {
	if !state.Finished() {
		return nil, invalidf("restart takes --state completed, dead or canceled, not %s: other jobs are not finished", state)
	}
	jobs, _, _, err := s.engine.Restart(ctx, RestartParams{State: state, Now: s.Now()})
	return jobs, err
}

// Remove forgets a completed, dead or canceled job and its runs; the caller
// removes its logs and dead/ file. Errors: ErrNotFound, ErrConflict for an
// unfinished job.
func (s *Store) Remove(ctx context.Context, id string) error {
	st, err := s.engine.Remove(ctx, id)
	if err == nil && st != "" {
		return notFinishedError(id, st, "cancel it first")
	}
	return err
}

// RestartHeldError is the ErrConflict of a restart of job id whose
// unique_key the live job h holds.
func RestartHeldError(id string, h KeyHolder) error { return heldKeyError(id, h, "restart") }

// notFinishedError is the ErrConflict of a restart or rm of a job in
// state st, which has not finished; what says what to do instead.
func notFinishedError(id string, st State, what string) error {
	return fmt.Errorf("%w: job %s is %s, not finished (completed, dead or canceled); %s", ErrConflict, id, st, what)
}

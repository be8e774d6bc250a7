package claim

import (
	"context"
	"fmt"
	"time"
)

// Hold takes job id out of the claim's reach: a pending or failed job
// becomes held, keeping its place (priority, run_after, seq), its attempts
// and its unique_key, until ReleaseHeld. Holding a held job changes nothing
// and is no error. It returns the job as it is now, and changed: whether
// this call held it (false: it was held already), read in the change's own
// transaction, so a caller may say which without a read of its own that
// another process could overtake. Errors: ErrNotFound; ErrConflict for a
// job in any other state.
func (s *Store) Hold(ctx context.Context, id string) (j Job, changed bool, err error) {
	j, changed, err = s.engine.SetHeld(ctx, HoldParams{ID: id, Held: true, Now: s.Now()})
	if err != nil || changed || j.State == Held {
		return j, changed, err
	}
	return Job{}, false, fmt.Errorf("%w: job %s is %s; only a pending or failed job can be held", ErrConflict, id, j.State)
}

// ReleaseHeld puts held job id back to the state it was held in (pending or
// failed), claimable again. Errors: ErrNotFound; ErrConflict for a job that
// is not held.
func (s *Store) ReleaseHeld(ctx context.Context, id string) (Job, error) {
	j, changed, err := s.engine.SetHeld(ctx, HoldParams{ID: id, Held: false, Now: s.Now()})
	if err != nil || changed {
		return j, err
	}
	return Job{}, fmt.Errorf("%w: job %s is %s, not held", ErrConflict, id, j.State)
}

// HoldParams is a hold (Held) or a release of job ID.
type HoldParams struct {
	ID   string
	Held bool
	Now  time.Time
}

package claim

import (
	"context"
	"time"
)

// Retry re-drives a dead job: pending now, attempts and lost runs back to 0.
// Earlier runs stay in its history, and new runs number on from them so no
// log is overwritten. Errors: ErrNotFound, ErrConflict (not dead).
func (s *Store) Retry(ctx context.Context, id string) (Job, error) {
	return s.engine.Retry(ctx, id, s.Now())
}

// RetryAll re-drives every dead job and returns them. A dead job whose
// unique_key another live job holds stays dead (retrying it would be the
// conflict Retry reports), and so does all but the oldest of several dead
// jobs that share a unique_key.
func (s *Store) RetryAll(ctx context.Context) ([]Job, error) {
	return s.engine.RetryAll(ctx, s.Now())
}

// Purge deletes the dead job id and its runs. Errors: ErrNotFound,
// ErrConflict (not dead).
func (s *Store) Purge(ctx context.Context, id string) error {
	return s.engine.Purge(ctx, id)
}

// PurgeFinished deletes jobs in state (completed or dead) that finished
// before cutoff, with their runs, and returns their ids so the caller can
// remove their logs.
func (s *Store) PurgeFinished(ctx context.Context, state State, cutoff time.Time) ([]string, error) {
	if state != Completed && state != Dead {
		return nil, invalidf("purge takes --state completed or dead, not %s: other jobs are not finished", state)
	}
	return s.engine.PurgeFinished(ctx, state, cutoff)
}

// HeldDead returns the dead jobs that Retry would refuse with ErrConflict
// right now, because a pending, processing or failed job holds their
// unique_key: after RetryAll, the ones it left dead. Oldest first.
func (s *Store) HeldDead(ctx context.Context) ([]Job, error) {
	return s.engine.HeldDead(ctx)
}

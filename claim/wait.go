package claim

import (
	"context"
	"time"
)

// Wait blocks until every job in ids is completed or dead, and returns them.
// It wakes on store changes from any process (see Changes) and polls every
// poll as a fallback. It returns ErrNotFound for an unknown id, and ctx's
// error when ctx ends first.
func (s *Store) Wait(ctx context.Context, ids []string, poll time.Duration) ([]Job, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := s.Changes(ctx)
	if err != nil {
		return nil, err
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		jobs, done, err := s.finished(ctx, ids)
		if err != nil || done {
			return jobs, err
		}
		select {
		case <-ctx.Done():
			return jobs, ctx.Err()
		case <-changes:
		case <-t.C:
		}
	}
}

func (s *Store) finished(ctx context.Context, ids []string) ([]Job, bool, error) {
	jobs := make([]Job, len(ids))
	done := true
	for i, id := range ids {
		j, err := s.Get(ctx, id)
		if err != nil {
			return nil, false, err
		}
		jobs[i] = j
		done = done && (j.State == Completed || j.State == Dead)
	}
	return jobs, done, nil
}

package claim

import (
	"context"
	"time"
)

// Wait blocks until every job in ids is completed, dead or canceled, and
// returns them.
// It wakes on store changes from any process (see Changes) and polls every
// poll as a fallback. It returns ErrNotFound for an unknown id, and ctx's
// error when ctx ends first.
func (s *Store) Wait(ctx context.Context, ids []string, poll time.Duration) ([]Job, error) {
	var jobs []Job
	err := s.WaitUntil(ctx, poll, func() (done bool, err error) {
		jobs, done, err = s.finished(ctx, ids)
		return done, err
	})
	return jobs, err
}

// WaitStarted blocks until job id has a run, or has finished without one
// (dead through a dependency, canceled while pending), and returns its
// runs, none in the second case: for following the output of a job that
// has not started yet. Errors as Wait.
func (s *Store) WaitStarted(ctx context.Context, id string, poll time.Duration) ([]Run, error) {
	var runs []Run
	err := s.WaitUntil(ctx, poll, func() (bool, error) {
		j, err := s.Get(ctx, id)
		if err != nil {
			return false, err
		}
		runs, err = s.Runs(ctx, id)
		return len(runs) > 0 || j.State.Finished(), err
	})
	return runs, err
}

// WaitUntil calls done after every change to the store from any process
// (and every poll, in case a wake-up is missed) until done reports true or
// fails, or ctx ends; it returns done's error or ctx's.
func (s *Store) WaitUntil(ctx context.Context, poll time.Duration, done func() (bool, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := s.Changes(ctx)
	if err != nil {
		return err
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if ok, err := done(); ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
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
		done = done && j.State.Finished()
	}
	return jobs, done, nil
}

package claim

import (
	"context"
	"slices"
	"time"
)

// Wait blocks until every job in ids is completed, dead or canceled, and
// returns them.
// It wakes on store changes from any process (see Changes) and polls every
// poll as a fallback. It returns ErrNotFound for an unknown id, and ctx's
// error when ctx ends first.
//
// A busy store changes hundreds of times a second, and reading every job
// at each change made a wait for hundreds of jobs a core's work beside the
// worker running them. So each look reads on from the first job not seen
// finished and stops at the first unfinished one (jobs mostly end in the
// order they were given); once all were seen finished, one more read of
// each gives what is returned, and a job that was restarted meanwhile is
// waited for again. The first look reads every job (an unknown id fails
// the wait at once).
func (s *Store) Wait(ctx context.Context, ids []string, poll time.Duration) ([]Job, error) {
	var jobs []Job
	next := len(ids) // the jobs before it were finished when read; the first look reads all
	err := s.WaitUntil(ctx, poll, func() (bool, error) {
		for ; next < len(ids); next++ {
			j, err := s.Get(ctx, ids[next])
			if err != nil {
				return false, err
			}
			if !j.State.Finished() {
				return false, nil
			}
		}
		var done bool
		var err error
		jobs, done, err = s.finished(ctx, ids)
		if err == nil && !done {
			next = slices.IndexFunc(jobs, func(j Job) bool { return !j.State.Finished() })
		}
		return done, err
	})
	return jobs, err
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
	jobs, err := s.GetAll(ctx, ids)
	if err != nil {
		return nil, false, err
	}
	done := !slices.ContainsFunc(jobs, func(j Job) bool { return !j.State.Finished() })
	return jobs, done, nil
}

package claim

import (
	"context"
	"time"
)

// MinuteRuns is how many runs ended in one minute with one outcome.
type MinuteRuns struct {
	Minute  time.Time // the minute's start, UTC
	Outcome string
	N       int
}

// RunsPerMinute counts the runs that ended at or after since, per minute
// and outcome, oldest minute first. It reads an index of ended runs alone,
// so its cost follows the runs in the window, not the size of the store.
func (s *Store) RunsPerMinute(ctx context.Context, since time.Time) ([]MinuteRuns, error) {
	return s.engine.RunsPerMinute(ctx, since)
}

// EndedRuns returns up to limit runs that ended after mark, in the order of
// RunMark: a reader that keeps the last one's Mark sees every ended run
// once (/metrics feeds its counters so, at any store size).
func (s *Store) EndedRuns(ctx context.Context, after RunMark, limit int) ([]Run, error) {
	return s.engine.EndedRuns(ctx, after, limit)
}

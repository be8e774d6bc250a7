package claim

import (
	"context"
	"fmt"
	"time"
)

// MinuteRuns is how many runs ended in one minute with one outcome.
type MinuteRuns struct {
	Minute  time.Time // the minute's start, UTC
	Outcome string
	N       int
}

// RunsPerMinute counts the runs that ended at or after since, per minute
// and outcome, oldest minute first. It reads the runs_ended index alone, so
// its cost follows the runs in the window, not the size of the store.
func (s *Store) RunsPerMinute(ctx context.Context, since time.Time) ([]MinuteRuns, error) {
	const minute = int64(time.Minute)
	rows, err := s.query(ctx, nil, `SELECT ended_at / ? AS m, outcome, count(*) FROM runs
		WHERE ended_at >= ? GROUP BY m, outcome ORDER BY m`, minute, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("count runs per minute: %w", err)
	}
	defer rows.Close()
	var out []MinuteRuns
	for rows.Next() {
		var m int64
		var r MinuteRuns
		if err := rows.Scan(&m, &r.Outcome, &r.N); err != nil {
			return nil, fmt.Errorf("count runs per minute: %w", err)
		}
		r.Minute = time.Unix(0, m*minute).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunMark is a place in the order of ended runs: by end time, then job id
// and attempt, so that runs ending in the same nanosecond are each read once.
type RunMark struct {
	EndedAt time.Time
	JobID   string
	Attempt int
}

// Mark returns r's place in the order of ended runs.
func (r Run) Mark() RunMark { return RunMark{r.EndedAt, r.JobID, r.Attempt} }

// EndedRuns returns up to limit runs that ended after mark, in the order of
// RunMark: a reader that keeps the last one's Mark sees every ended run
// once (/metrics feeds its counters so, at any store size).
func (s *Store) EndedRuns(ctx context.Context, after RunMark, limit int) ([]Run, error) {
	var at int64
	if !after.EndedAt.IsZero() {
		at = after.EndedAt.UnixNano()
	}
	rows, err := s.query(ctx, nil, "SELECT "+runColumns+` FROM runs
		WHERE ended_at >= ? AND (ended_at > ? OR job_id > ? OR (job_id = ? AND attempt > ?))
		ORDER BY ended_at, job_id, attempt LIMIT ?`,
		at, at, after.JobID, after.JobID, after.Attempt, limit)
	if err != nil {
		return nil, fmt.Errorf("list ended runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list ended runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

package sqlite

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// RunsPerMinute counts ended runs per minute and outcome from the
// runs_ended index.
func (e *Engine) RunsPerMinute(ctx context.Context, since time.Time) ([]claim.MinuteRuns, error) {
	const minute = int64(time.Minute)
	return queryAll(ctx, e, "count runs per minute", claim.ScanMinuteRuns, `SELECT ended_at / ? AS m, outcome, count(*) FROM runs
		WHERE ended_at >= ? GROUP BY m, outcome ORDER BY m, outcome`, minute, since.UnixNano())
}

// EndedRuns returns up to limit runs that ended after mark.
func (e *Engine) EndedRuns(ctx context.Context, after claim.RunMark, limit int) ([]claim.Run, error) {
	var at int64
	if !after.EndedAt.IsZero() {
		at = after.EndedAt.UnixNano()
	}
	return queryAll(ctx, e, "list ended runs", claim.ScanRunRow, "SELECT "+runColumns+` FROM runs
		WHERE ended_at >= ? AND (ended_at > ? OR job_id > ? OR (job_id = ? AND attempt > ?))
		ORDER BY ended_at, job_id, attempt LIMIT ?`,
		at, at, after.JobID, after.JobID, after.Attempt, limit)
}

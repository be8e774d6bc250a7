package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/queuectl/queuectl/claim"
)

// unmetNow selects, for the job in jobs.id, an unmet dependency that
// cannot complete as things stand: removed, canceled, or dead. RetryAll
// re-drives in rounds, so that a dead dependency re-driven in one round
// frees its dependents for the next, and one left dead keeps them dead.
const unmetNow = ` EXISTS (SELECT 1 FROM deps d LEFT JOIN jobs a ON a.id = d.after_id
	WHERE d.job_id = jobs.id AND NOT d.met AND (a.id IS NULL OR a.state IN ('dead', 'canceled')))`

// waitedFor selects whether an unfinished job waits for jobs.id.
const waitedFor = ` EXISTS (SELECT 1 FROM deps d JOIN jobs w ON w.id = d.job_id
	WHERE d.after_id = jobs.id AND NOT d.met AND w.state NOT IN ('completed', 'dead', 'canceled'))`

// refuseBlocked returns claim.BlockedError when job id, just re-driven in
// tx, waits for a dependency that can never complete.
func refuseBlocked(ctx context.Context, tx *sql.Tx, id string) error {
	rows, err := tx.QueryContext(ctx, `SELECT d.after_id, coalesce(a.state, '') FROM deps d
		LEFT JOIN jobs a ON a.id = d.after_id
		WHERE d.job_id = ? AND NOT d.met AND (a.id IS NULL OR a.state IN ('dead', 'canceled'))
		ORDER BY d.after_id`, id)
	if err != nil {
		return fmt.Errorf("dependencies of %s: %w", id, err)
	}
	defer rows.Close()
	bs, err := claim.Collect(rows, claim.ScanBlocker)
	if err != nil {
		return fmt.Errorf("dependencies of %s: %w", id, err)
	}
	if len(bs) == 0 {
		return nil
	}
	return claim.BlockedError(id, bs)
}

// refuseWaitedFor returns claim.WaitedForError when unfinished jobs wait
// for job id, just deleted in tx.
func refuseWaitedFor(ctx context.Context, tx *sql.Tx, id string) error {
	rows, err := tx.QueryContext(ctx, `SELECT w.id FROM deps d JOIN jobs w ON w.id = d.job_id
		WHERE d.after_id = ? AND NOT d.met AND w.state NOT IN ('completed', 'dead', 'canceled')
		ORDER BY w.seq LIMIT 10`, id)
	if err != nil {
		return fmt.Errorf("dependents of %s: %w", id, err)
	}
	defer rows.Close()
	ids, err := claim.Collect(rows, claim.ScanValue[string])
	if err != nil {
		return fmt.Errorf("dependents of %s: %w", id, err)
	}
	if len(ids) == 0 {
		return nil
	}
	return claim.WaitedForError(id, ids)
}

package claim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"
)

// Enqueue stores one job durably: when it returns nil, the commit is fsync'd.
// Errors: ErrInvalid (bad spec, missing cwd), ErrConflict (the id exists).
func (s *Store) Enqueue(ctx context.Context, nj NewJob) (Result, error) {
	rs, err := s.EnqueueAll(ctx, []NewJob{nj})
	if err != nil {
		return Result{}, err
	}
	return rs[0], nil
}

// EnqueueAll stores jobs in one transaction: all of them, or none when any
// is refused (the error names its index).
func (s *Store) EnqueueAll(ctx context.Context, jobs []NewJob) ([]Result, error) {
	cfg, err := s.Config(ctx)
	if err != nil {
		return nil, err
	}
	order, err := orderAfter(jobs)
	if err != nil {
		return nil, err
	}
	rows := make([]NewRow, len(jobs))
	for k, i := range order {
		if rows[k], err = newRow(cfg, jobs[i], s.Now()); err != nil {
			return nil, nth(i, len(jobs), err)
		}
	}
	rs, err := s.engine.Enqueue(ctx, EnqueueParams{Jobs: rows, Now: s.Now()})
	if err != nil {
		var at *AtError
		if errors.As(err, &at) {
			return nil, nth(order[at.Index], len(jobs), skippedDependency(at.Err, rows))
		}
		return nil, err
	}
	out := make([]Result, len(jobs))
	for k, i := range order {
		out[i] = ownReason(rs[k], s.Now())
	}
	return out, nil
}

// ownReason sets the PendingReason that r's job's own fields tell
// (scheduled, waiting): an enqueue reads no queue's settings for it, which
// Get and Jobs do.
func ownReason(r Result, now time.Time) Result {
	r.Job.PendingReason = blockers{}.reason(r.Job, now)
	return r
}

// AtError is an engine's refusal of the job at Index of an all-or-nothing
// batch.
type AtError struct {
	Index int
	Err   error
}

func (e *AtError) Error() string { return fmt.Sprintf("job %d: %v", e.Index+1, e.Err) }
func (e *AtError) Unwrap() error { return e.Err }

// nth names the refused job i of a batch of n, when there is more than one.
func nth(i, n int, err error) error {
	if n > 1 {
		return fmt.Errorf("job %d of %d: %w", i+1, n, err)
	}
	return err
}

// EnqueueEach stores jobs in one transaction, each on its own: a refused job
// gets its Result.Err and the others are still stored. The error is for the
// transaction as a whole (then nothing was stored).
func (s *Store) EnqueueEach(ctx context.Context, jobs []NewJob) ([]Result, error) {
	cfg, err := s.Config(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(jobs))
	rows := make([]NewRow, 0, len(jobs))
	index := make([]int, 0, len(jobs)) // rows[k] is jobs[index[k]]
	// Jobs after jobs of the same batch go after them. With a cycle among
	// them, the batch keeps its order, and the engine refuses each job of
	// the cycle for waiting on one it has not stored.
	order, err := orderAfter(jobs)
	if err != nil {
		order = make([]int, len(jobs))
		for i := range order {
			order[i] = i
		}
	}
	for _, i := range order {
		nj := jobs[i]
		row, err := newRow(cfg, nj, s.Now())
		if err != nil {
			out[i] = Result{Err: err}
			continue
		}
		rows, index = append(rows, row), append(index, i)
	}
	rs, err := s.engine.Enqueue(ctx, EnqueueParams{Jobs: rows, Each: true, Now: s.Now()})
	if err != nil {
		return nil, err
	}
	for k, r := range rs {
		out[index[k]] = ownReason(r, s.Now())
	}
	return out, nil
}

// checkCwd refuses (ErrInvalid) a cwd that is not an existing directory;
// "" is the worker's own.
func checkCwd(cwd string) error {
	if cwd == "" {
		return nil
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return invalidf("cwd %q is not an existing directory; create it or fix the path", cwd)
	}
	return nil
}

// newRow checks nj, its cwd too, and makes the job it asks for, with cfg's
// defaults, as enqueued at now.
func newRow(cfg Config, nj NewJob, now time.Time) (NewRow, error) {
	if err := checkCwd(nj.Cwd); err != nil {
		return NewRow{}, err
	}
	return buildRow(cfg, nj, now)
}

// buildRow is newRow without the look at the disk: it checks nj alone.
func buildRow(cfg Config, nj NewJob, now time.Time) (NewRow, error) {
	if err := nj.Validate(); err != nil {
		return NewRow{}, err
	}
	if nj.ID == "" {
		nj.ID = NewID(now)
	}
	j := Job{ID: nj.ID, Command: nj.Command, State: Pending, Queue: nj.Queue, Priority: nj.Priority,
		MaxRetries: cfg.MaxRetries, BackoffBase: cfg.BackoffBase, Timeout: cfg.JobTimeout,
		Cwd: nj.Cwd, UniqueKey: nj.UniqueKey, Label: nj.Label, RunAt: nj.RunAt}
	if nj.Umask != nil {
		mask := *nj.Umask // the job's own, not the caller's variable
		j.Umask = &mask
	}
	if nj.MaxRetries != nil {
		j.MaxRetries = *nj.MaxRetries
	}
	if nj.BackoffBase != nil {
		j.BackoffBase = *nj.BackoffBase
	}
	if nj.Timeout != nil {
		j.Timeout = *nj.Timeout
	}
	if j.Queue == "" {
		j.Queue = DefaultQueue
	}
	if nj.Delay > 0 {
		j.RunAt = now.Add(nj.Delay)
	}
	// Stored times are Unix nanoseconds in UTC: make the job what reading
	// it back would give.
	j.RunAt = nanoTime(j.RunAt)
	j.CreatedAt = nanoTime(now)
	j.UpdatedAt, j.RunAfter = j.CreatedAt, j.CreatedAt
	if !j.RunAt.IsZero() {
		j.RunAfter = j.RunAt
	}
	if len(nj.Env) > 0 {
		j.Env = maps.Clone(nj.Env)
	}
	j.Hooks, j.Limits = nj.Hooks, nj.Limits
	return NewRow{Job: j, IngestKey: nj.IngestKey, IngestAgain: nj.IngestAgain, Redrive: nj.Redrive, After: slices.Compact(slices.Sorted(slices.Values(nj.After)))}, nil
}

// nanoTime is t as stored: UTC, monotonic clock dropped; zero stays zero.
func nanoTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano()).UTC()
}

// EnqueueNotGone stores p with enqueue, but for the rows in gone (index:
// the id of the job their spool file made, since removed): each of those
// is a Duplicate, as its file would be while the job was there, and is
// not stored again. For the engines, whose enqueue transactions look up
// the ingest keys of removed jobs (gone_ingests) and pass the rest on; an
// AtError names the row's index in p.
func EnqueueNotGone(p EnqueueParams, gone map[int]string, enqueue func(EnqueueParams) ([]Result, error)) ([]Result, error) {
	if len(gone) == 0 {
		return enqueue(p)
	}
	kept, at := p, make([]int, 0, len(p.Jobs)-len(gone))
	kept.Jobs = make([]NewRow, 0, cap(at))
	for i, row := range p.Jobs {
		if _, ok := gone[i]; !ok {
			kept.Jobs, at = append(kept.Jobs, row), append(at, i)
		}
	}
	rs, err := enqueue(kept)
	if ae := (*AtError)(nil); errors.As(err, &ae) {
		ae.Index = at[ae.Index]
	}
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(p.Jobs))
	for k, r := range rs {
		out[at[k]] = r
	}
	for i, id := range gone {
		out[i] = Result{Job: Job{ID: id}, Outcome: Duplicate}
	}
	return out, nil
}

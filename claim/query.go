package claim

import (
	"context"
	"iter"
	"slices"
)

// Get returns the job with the given id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Job, error) {
	j, err := s.engine.Get(ctx, id)
	return s.withReason(ctx, j, err)
}

// GetAll returns the jobs of ids, in the order of ids, or ErrNotFound
// naming the first that does not exist. It reads them in one statement
// and the queues once (for the pending reasons), where a Get of each is a
// statement each and three for a pending job: wait looks at every job it
// waits for, 165,000 jobs for a wait --all of a big queue.
func (s *Store) GetAll(ctx context.Context, ids []string) ([]Job, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	at := make(map[string]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	jobs := make([]Job, len(ids))
	for j, err := range s.engine.GetAll(ctx, ids) {
		if err != nil {
			return nil, err
		}
		jobs[at[j.ID]] = j
	}
	for i, j := range jobs {
		if j.ID == "" {
			if k := at[ids[i]]; k != i && jobs[k].ID != "" { // an id named twice
				jobs[i] = jobs[k]
				continue
			}
			return nil, NotFoundError(ids[i])
		}
	}
	return s.WithReasons(ctx, jobs)
}

// Existing returns which of ids name a job in the store, in one statement
// whatever the number of ids (GetAll's): a worker asks it of the job
// directories in its logs/, a batch at a time, to remove those of jobs
// removed from the store by another host (run.PruneRemovedLogs).
func (s *Store) Existing(ctx context.Context, ids []string) (map[string]bool, error) {
	found := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return found, nil
	}
	for j, err := range s.engine.GetAll(ctx, ids) {
		if err != nil {
			return nil, err
		}
		found[j.ID] = true
	}
	return found, nil
}

// withReason sets the PendingReason (or HeldBack) of j, read with err; a
// job whose own fields tell it needs no read of the queues.
func (s *Store) withReason(ctx context.Context, j Job, err error) (Job, error) {
	if err != nil || j.State != Pending && j.State != Failed {
		return j, err
	}
	var b blockers
	if !j.RunAfter.After(s.Now()) && j.Waiting == 0 {
		if b, err = s.blockers(ctx); err != nil {
			return Job{}, err
		}
	}
	j.PendingReason, j.HeldBack = b.reason(j, s.Now()), b.heldBack(j, s.Now())
	return j, nil
}

// WithReasons sets the PendingReason of each pending job of jobs (and the
// HeldBack of each failed one), as the store is now: Get and List set it;
// the job a change returns (an enqueue, a restart, a release) does not,
// for it costs a read of the queues.
func (s *Store) WithReasons(ctx context.Context, jobs []Job) ([]Job, error) {
	if !slices.ContainsFunc(jobs, func(j Job) bool { return j.State == Pending || j.State == Failed }) {
		return jobs, nil
	}
	b, err := s.blockers(ctx)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	for i := range jobs {
		jobs[i].PendingReason, jobs[i].HeldBack = b.reason(jobs[i], now), b.heldBack(jobs[i], now)
	}
	return jobs, nil
}

// Filter selects jobs for List. Zero fields select everything.
type Filter struct {
	State State
	Queue string
	// IDPrefix keeps the jobs whose id starts with it, and orders them by
	// id (generated ids sort by creation time), so that the id index finds
	// them at any store size.
	IDPrefix string
	Label    string // only jobs with this label
	// Reason keeps the pending jobs whose PendingReason it is, or with
	// ReasonRunnable those with none: a free slot would start them now.
	// It is read from each listed job, not by the store's query: a listing
	// by reason reads every pending job of the other filters.
	Reason string
	Limit  int  // 0: no limit
	Newest bool // newest first (with IDPrefix: highest id first)
	// After continues a listing after the job with this Seq, in the list's
	// order: a page costs the same at the millionth job as at the first
	// (keyset pagination). 0: from the start. AfterID is the same for an
	// IDPrefix listing, which is ordered by id.
	After   int64
	AfterID string
}

// List returns jobs in enqueue order (see Filter for the others), all in
// one slice: for pages. A listing of any size is Jobs.
// Errors: ErrInvalid for an IDPrefix no job id can start with.
func (s *Store) List(ctx context.Context, f Filter) ([]Job, error) {
	var out []Job
	for j, err := range s.Jobs(ctx, f) {
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// Jobs streams the jobs f selects, in its order, one at a time, from the
// store to the caller: memory stays flat at any size. The range ends at
// the first error, which it yields: ErrInvalid for an IDPrefix no job id
// can start with, or the engine's. While the caller ranges, the read holds
// a connection (SQLite: the store's only one), so the loop's body must not
// use the same Store.
func (s *Store) Jobs(ctx context.Context, f Filter) iter.Seq2[Job, error] {
	if f.IDPrefix != "" && !ValidID(f.IDPrefix) {
		err := invalidf("no job id starts with %q: ids are letters, digits and . _ -, starting with a letter or digit", f.IDPrefix)
		return func(yield func(Job, error) bool) { yield(Job{}, err) }
	}
	if f.Reason == "" {
		return s.withReasons(ctx, s.engine.Jobs(ctx, f))
	}
	if err := checkReason(f); err != nil {
		return func(yield func(Job, error) bool) { yield(Job{}, err) }
	}
	limit := f.Limit
	f.State, f.Limit = Pending, 0
	return func(yield func(Job, error) bool) {
		n := 0
		for j, err := range s.withReasons(ctx, s.engine.Jobs(ctx, f)) {
			if err != nil {
				yield(j, err)
				return
			}
			if reasonOf(j) != f.Reason {
				continue
			}
			if !yield(j, nil) {
				return
			}
			if n++; n == limit {
				return
			}
		}
	}
}

// IDPrefixEnd is the end of the range of ids that start with prefix (a
// ValidID): prefix with its last byte raised. Id bytes are ASCII below
// 0x7f, so it cannot carry.
func IDPrefixEnd(prefix string) string {
	return prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1)
}

// Counts returns the number of jobs in each state; every state is present.
func (s *Store) Counts(ctx context.Context) (map[State]int, error) {
	byQueue, err := s.QueueCounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[State]int, len(States))
	for _, st := range States {
		out[st] = 0
	}
	for _, counts := range byQueue {
		for st, n := range counts {
			out[st] += n
		}
	}
	return out, nil
}

// QueueCounts returns the number of jobs per queue and state, leaving out
// the zeros: a queue without jobs is absent. It reads a few rows at any
// store size.
func (s *Store) QueueCounts(ctx context.Context) (map[string]map[State]int, error) {
	return s.engine.QueueCounts(ctx)
}

// Runs returns every run of a job, first attempt first, without the bytes
// of their tails (Tail.Size is there): what most readers need, light at
// any output size.
func (s *Store) Runs(ctx context.Context, jobID string) ([]Run, error) {
	return s.engine.Runs(ctx, jobID, false)
}

// RunsWithTails is Runs with the bytes of every run's tails: up to
// 2 × TailBytes a run, for `logs` and `show` where the files are not.
func (s *Store) RunsWithTails(ctx context.Context, jobID string) ([]Run, error) {
	return s.engine.Runs(ctx, jobID, true)
}

package claim

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// Retry re-drives a dead job: pending now, attempts and lost runs back to 0.
// Earlier runs stay in its history, and new runs number on from them so no
// log is overwritten. The jobs its death made dead ("dependency X ended
// dead"), and theirs, are re-armed with it: pending, waiting for it again.
// Errors: ErrNotFound, ErrConflict (not dead).
func (s *Store) Retry(ctx context.Context, id string) (Job, error) {
	j, _, err := s.RetryChain(ctx, id)
	return j, err
}

// RetryChain is Retry that also says which jobs came back with id, and
// which its death made dead stay dead, so that the caller can tell the user.
func (s *Store) RetryChain(ctx context.Context, id string) (Job, Rearmed, error) {
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

// DropEnv drops the env of the jobs completed or canceled before cutoff
// (config env-retention): environment values are often secrets, and a
// finished job needs them only to be restarted. Dead jobs keep theirs to
// be re-driven. It returns how many jobs lost their env.
func (s *Store) DropEnv(ctx context.Context, cutoff time.Time) (int64, error) {
	return s.engine.DropEnv(ctx, cutoff)
}

// PurgeFinished deletes jobs in state (completed, dead or canceled) that finished
// before cutoff, with their runs, and returns their ids so the caller can
// remove their logs.
func (s *Store) PurgeFinished(ctx context.Context, state State, cutoff time.Time) ([]string, error) {
	if !state.Finished() {
		return nil, invalidf("purge takes --state completed, dead or canceled, not %s: other jobs are not finished", state)
	}
	return s.engine.PurgeFinished(ctx, state, cutoff)
}

// HeldDead returns the dead jobs that Retry would refuse with ErrConflict
// right now, because a pending, processing or failed job holds their
// unique_key: after RetryAll, the ones it left dead. Oldest first.
func (s *Store) HeldDead(ctx context.Context) ([]Job, error) {
	return s.engine.HeldDead(ctx)
}

// BlockedDead returns the dead jobs that wait for a job that is removed,
// dead or canceled: after RetryAll, the ones it left dead for that (Retry
// would refuse them, naming the job). Oldest first.
func (s *Store) BlockedDead(ctx context.Context) ([]Job, error) {
	return s.engine.BlockedDead(ctx)
}

// EndDependents makes dead the jobs waiting for id, which has just ended in
// state (dead or canceled), and the jobs waiting for those, down the chain,
// each with an error naming id and why it ended (DependencyError). It
// returns them, so that the caller can write their dead/ files and run
// their on_dead hooks. A job waiting for a job that ended could never run;
// `dlq retry` of id re-arms them all.
func (s *Store) EndDependents(ctx context.Context, id string, state State) ([]Job, error) {
	if !DependencyEnded(state) {
		return nil, nil
	}
	dep, err := s.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("end the dependents of %s: %w", id, err)
	}
	dep.State = state
	return s.engine.EndDependents(ctx, []EndDependentsParams{{ID: id, State: state, Cause: DependencyError(dep), Now: s.Now()}})
}

// EndLeftDependents ends the jobs that still wait for a job that is dead
// or canceled: a worker that crashed between a death and EndDependents
// leaves them waiting. Workers call it at start-up.
func (s *Store) EndLeftDependents(ctx context.Context) ([]Job, error) {
	left, err := s.engine.EndedDependencies(ctx)
	if err != nil {
		return nil, err
	}
	if len(left) == 0 {
		return nil, nil
	}
	ids := make([]string, len(left))
	for i, p := range left {
		ids[i] = p.ID
	}
	deps, err := s.GetAll(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("end the jobs waiting for dead or canceled ones: %w", err)
	}
	now := s.Now()
	for i, dep := range deps {
		dep.State = left[i].State
		left[i].Cause, left[i].Now = DependencyError(dep), now
	}
	return s.engine.EndDependents(ctx, left)
}

// HookDone records how a finish hook after run r ended ("on_success ok",
// "on_dead failed: …"), for `show`.
func (s *Store) HookDone(ctx context.Context, r Run, text string) error {
	return s.engine.HookDone(ctx, r, text)
}

// InRounds calls round until it changes no job, and returns the jobs of
// every round in Seq order: a bulk re-drive (dlq retry --all, restart
// --all) goes down the chains of dependencies a round at a time, so that a
// job re-driven in one frees its dependents for the next, and one left
// dead keeps them dead.
func InRounds(round func() ([]Job, error)) ([]Job, error) {
	var out []Job
	for {
		jobs, err := round()
		if err != nil {
			return out, err
		}
		if len(jobs) == 0 {
			slices.SortFunc(out, func(a, b Job) int { return cmp.Compare(a.Seq, b.Seq) })
			return out, nil
		}
		out = append(out, jobs...)
	}
}

// WalkDown visits start, then each job a visit returns, breadth first,
// until no visit returns one: how both engines go down a chain of
// dependencies, one level a statement (re-arming it, ending it, rewriting
// its errors).
func WalkDown[T any](start T, visit func(T) ([]T, error)) error {
	for next := []T{start}; len(next) > 0; {
		x := next[0]
		next = next[1:]
		more, err := visit(x)
		if err != nil {
			return err
		}
		next = append(next, more...)
	}
	return nil
}

// IDs lists the ids of jobs, in their order.
func IDs(jobs []Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

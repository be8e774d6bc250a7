package claim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A job with "after" waits, pending, until every job it names completed.
// The store keeps, per job, the count of dependencies not yet completed
// (jobs.waiting) and leaves a job out of the claim's index while it is not
// zero, so waiting jobs cost the claim nothing however many there are; a
// completion counts its dependents down in the same transaction. A
// dependency that ends dead or canceled makes its dependents dead with an
// error naming it and why it ended, "dependency X ended dead: exit 2" (and theirs,
// down the chain, naming the same X); re-driving X
// (dlq retry, restart) re-arms the jobs it killed: pending again, waiting
// for X.

// DependencyError is the last_error of a job made dead because dep, which
// it waited for, ended dead or canceled: it names the root cause, so that
// a pipeline's last step says which step failed and how ("dependency build
// ended dead: exit 2", as SPEC §3 words it), not only the step it waited for. A dep that itself died
// of a dependency passes its own error on, which already names the root.
func DependencyError(dep Job) string {
	switch {
	case dep.State == Canceled:
		return fmt.Sprintf("dependency %s was canceled", dep.ID)
	case dep.DeadBy != "" && dep.LastError != "":
		return dep.LastError
	case dep.ExitCode != nil && dep.LastError == fmt.Sprintf("exit status %d", *dep.ExitCode):
		return fmt.Sprintf("dependency %s ended dead: exit %d", dep.ID, *dep.ExitCode)
	case dep.LastError != "":
		return fmt.Sprintf("dependency %s ended dead: %s", dep.ID, dep.LastError)
	}
	return fmt.Sprintf("dependency %s ended %s", dep.ID, dep.State)
}

// ErrorFor is the last_error of a job made dead because dep ended: p.Cause
// for the jobs that waited for p.ID itself, and for those further down the
// chain the same cause and the job they waited for.
func (p EndDependentsParams) ErrorFor(dep string) string {
	if dep == p.ID {
		return p.Cause
	}
	return p.Cause + " (via " + dep + ")"
}

// KeyHeldCause is the last_error of a dependent that a re-drive of the job
// that killed it (dlq retry, restart) leaves dead, because job holder
// holds its unique_key key: its old error would say that a job pending
// again died. The jobs below it, left dead with it, get KeyHeldBelow's ErrorFor.
func KeyHeldCause(key, holder string) string {
	return fmt.Sprintf("unique_key %s is held by job %s", key, holder)
}

// KeyHeldBelow is what the jobs below id, a dependent left dead as
// KeyHeldCause says, are told: id is their root cause now.
func KeyHeldBelow(id, key, holder string) EndDependentsParams {
	return EndDependentsParams{ID: id, Cause: fmt.Sprintf("dependency %s stays dead: %s", id, KeyHeldCause(key, holder))}
}

// orderAfter orders a batch so that every job comes after the jobs of the
// batch it waits for, which lets `enqueue -` name ids of its own batch in
// any order: order[k] is the index in batch of the k-th job to store. A
// cycle among the batch is refused (ErrInvalid, naming the ids); ids that
// are not in the batch are the engine's to find, in its transaction.
func orderAfter(batch []NewJob) (order []int, err error) {
	inBatch := map[string]int{}
	for i, nj := range batch {
		if nj.ID != "" {
			inBatch[nj.ID] = i
		}
	}
	const (
		unseen = iota
		visiting
		done
	)
	mark := make([]int, len(batch))
	var path []string
	var visit func(i int) error
	visit = func(i int) error {
		switch mark[i] {
		case visiting:
			start := slices.Index(path, batch[i].ID)
			return invalidf("after: jobs %s wait for each other (a cycle); drop one of those after entries",
				strings.Join(append(path[start:], batch[i].ID), " → "))
		case done:
			return nil
		}
		mark[i] = visiting
		path = append(path, batch[i].ID)
		for _, dep := range batch[i].After {
			if j, ok := inBatch[dep]; ok {
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		mark[i] = done
		order = append(order, i)
		return nil
	}
	for i := range batch {
		if err := visit(i); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// DependencyEnded reports whether a job in state st can never complete any
// more, so that the jobs waiting for it die: dead, or canceled.
func DependencyEnded(st State) bool { return st == Dead || st == Canceled }

// UnknownDependencyError is the ErrInvalid of a job whose after names ids
// that no job has.
func UnknownDependencyError(ids []string) error {
	return &unknownDependency{ids: ids}
}

// unknownDependency is UnknownDependencyError's error: the ids, so that
// skippedDependency can tell a job of the batch that was skipped.
type unknownDependency struct{ ids []string }

func (e *unknownDependency) Error() string {
	return fmt.Sprintf("%v: after: no job %s; a job can only wait for jobs that exist, or that come before it in the same batch",
		ErrInvalid, strings.Join(e.ids, ", "))
}

func (e *unknownDependency) Unwrap() error { return ErrInvalid }

// skippedDependency explains err, an engine's refusal of a job of rows, when
// the job waits for a job before it in rows that was not stored because a
// live job holds its unique_key (Skipped): "no job X" would be false, X is
// right there in the batch. Any other err comes back as it is.
func skippedDependency(err error, rows []NewRow) error {
	var u *unknownDependency
	if !errors.As(err, &u) {
		return err
	}
	for _, id := range u.ids {
		for _, r := range rows {
			if r.Job.ID == id && r.Job.UniqueKey != "" {
				return invalidf("after: job %s of this batch was skipped, as a live job holds its unique_key %q, so this job would wait for a job that is not there; enqueue them once that job has ended (queuectl wait)",
					id, r.Job.UniqueKey)
			}
		}
	}
	return err
}

// NeverRunsError is the ErrConflict of a job that would wait for ever,
// for a dependency (Blocker) that cannot complete as things stand: a new
// job enqueued after it (Job ""), or job Job re-driven (dlq retry,
// restart, its dead/ file dropped back) while it still waits for it.
type NeverRunsError struct {
	Job     string
	Blocker Blocker
}

// DeadDependencyError is the ErrConflict of a job enqueued after a job that
// is already dead or canceled: it could never run.
func DeadDependencyError(id string, state State) error {
	return &NeverRunsError{Blocker: Blocker{ID: id, State: state}}
}

// Blocker is a job's dependency that is not met and never will be as
// things stand: State is dead or canceled, or "" for a job removed.
type Blocker struct {
	ID    string
	State State
}

// BlockedError is the ErrConflict of a re-drive (dlq retry, restart) of
// job id while a dependency it still waits for could never complete: it
// would wait for ever. Re-driving that dependency first re-arms id with
// it; a removed one cannot be.
func BlockedError(id string, blockers []Blocker) error {
	return &NeverRunsError{Job: id, Blocker: blockers[0]}
}

// Redrive is the command that makes the blocker run again: "" for a
// removed one.
func (e *NeverRunsError) Redrive() string {
	switch e.Blocker.State {
	case "":
		return ""
	case Canceled: // not in the dead-letter queue: dlq retry refuses it
		return "queuectl restart " + e.Blocker.ID
	}
	return "queuectl dlq retry " + e.Blocker.ID
}

func (e *NeverRunsError) Error() string {
	b := e.Blocker
	if e.Job == "" {
		return fmt.Sprintf("%v: after: job %s is %s, so this job could never run; re-drive it first (%s)", ErrConflict, b.ID, b.State, e.Redrive())
	}
	switch b.State {
	case "":
		return fmt.Sprintf("%v: job %s waits for job %s, which was removed, so it could never run; enqueue it again without --after %s", ErrConflict, e.Job, b.ID, b.ID)
	case Canceled:
		return fmt.Sprintf("%v: job %s waits for job %s, which is canceled, so it could never run; restart %s first (%s), which re-arms %s", ErrConflict, e.Job, b.ID, b.ID, e.Redrive(), e.Job)
	}
	return fmt.Sprintf("%v: job %s waits for job %s, which is %s, so it could never run; re-drive %s first (%s), which re-arms %s", ErrConflict, e.Job, b.ID, b.State, b.ID, e.Redrive(), e.Job)
}

func (e *NeverRunsError) Unwrap() error { return ErrConflict }

// WaitedForError is the ErrConflict of removing job id (rm, dlq purge)
// while unfinished jobs wait for it: they would wait for ever.
func WaitedForError(id string, waiters []string) error {
	return fmt.Errorf("%w: job %s is waited for by %s (after %s), which could then never run; cancel or rm them first",
		ErrConflict, id, strings.Join(waiters, ", "), id)
}

package claim

import (
	"fmt"
	"slices"
	"strings"
)

// A job with "after" waits, pending, until every job it names completed.
// The store keeps, per job, the count of dependencies not yet completed
// (jobs.waiting) and leaves a job out of the claim's index while it is not
// zero, so waiting jobs cost the claim nothing however many there are; a
// completion counts its dependents down in the same transaction. A
// dependency that ends dead or canceled makes its dependents dead with
// "dependency X ended dead" (and theirs, down the chain); re-driving X
// (dlq retry, restart) re-arms the jobs it killed: pending again, waiting
// for X.

// DependencyError is the "dependency X ended dead" of a job whose
// dependency died or was canceled.
func DependencyError(dep string, state State) string {
	return fmt.Sprintf("dependency %s ended %s", dep, state)
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
	return invalidf("after: no job %s; a job can only wait for jobs that exist, or that come before it in the same batch", strings.Join(ids, ", "))
}

// DeadDependencyError is the ErrConflict of a job enqueued after a job that
// is already dead or canceled: it could never run.
func DeadDependencyError(id string, state State) error {
	redrive := "queuectl dlq retry " + id
	if state == Canceled { // not in the dead-letter queue: dlq retry refuses it
		redrive = "queuectl restart " + id
	}
	return fmt.Errorf("%w: after: job %s is %s, so this job could never run; re-drive it first (%s)", ErrConflict, id, state, redrive)
}

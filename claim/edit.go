package claim

import (
	"context"
	"fmt"
	"maps"
	"time"
)

// Edit is a change to a job that has not started; nil (or empty) fields
// leave the job's as they are.
type Edit struct {
	Command    *string
	Priority   *int
	Queue      *string
	RunAt      *time.Time // also the job's not-before time
	Env        map[string]string
	ReplaceEnv bool // Env is the job's whole environment, not entries to set
	MaxRetries *int
	Label      *string
}

// Empty reports whether e changes nothing: every field left out.
func (e Edit) Empty() bool {
	return e.Command == nil && e.Priority == nil && e.Queue == nil && e.RunAt == nil && e.Env == nil && !e.ReplaceEnv &&
		e.MaxRetries == nil && e.Label == nil
}

// EditParams is an edit as the Store asks an engine for it: Job carries
// every editable field's new value; the job must still be unstarted and
// last changed at Was.
type EditParams struct {
	Job Job
	Was time.Time
	Now time.Time
}

// editTries bounds how often Edit starts again when the job changed
// between its read and its write (a hold, another edit).
const editTries = 5

// Edit changes job id, pending or held, as e says, and returns it. The
// write is conditional on the job not having started (nor changed since it
// was read), in one statement: of an edit and a claim of the same job, one
// wins, never both. Errors: ErrNotFound; ErrConflict once the job has
// started (processing, or any later state); ErrInvalid for a value a job
// spec could not have.
func (s *Store) Edit(ctx context.Context, id string, e Edit) (Job, error) {
	for range editTries {
		j, err := s.Get(ctx, id)
		if err != nil {
			return Job{}, err
		}
		if err := EditableError(j); err != nil {
			return Job{}, err
		}
		next, err := e.apply(j)
		if err != nil {
			return Job{}, err
		}
		out, changed, err := s.engine.Edit(ctx, EditParams{Job: next, Was: j.UpdatedAt, Now: s.Now()})
		if err != nil || changed {
			return s.withReason(ctx, out, err)
		}
	}
	return Job{}, fmt.Errorf("%w: job %s keeps changing; try again", ErrConflict, id)
}

// apply returns j as e changes it, checked as a job spec is.
func (e Edit) apply(j Job) (Job, error) {
	if e.Queue != nil && *e.Queue == "" {
		return Job{}, invalidf("the queue is empty; give a queue name")
	}
	set(&j.Command, e.Command)
	set(&j.Priority, e.Priority)
	set(&j.Queue, e.Queue)
	set(&j.MaxRetries, e.MaxRetries)
	set(&j.Label, e.Label)
	if e.RunAt != nil {
		j.RunAt, j.RunAfter = e.RunAt.UTC(), e.RunAt.UTC()
	}
	if e.ReplaceEnv {
		j.Env = e.Env
	} else if len(e.Env) > 0 {
		env := maps.Clone(j.Env)
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, e.Env)
		j.Env = env
	}
	nj := NewJob{Command: j.Command, Priority: j.Priority, Queue: j.Queue, MaxRetries: &j.MaxRetries,
		Label: j.Label, Env: j.Env, RunAt: j.RunAt}
	if err := nj.Validate(); err != nil {
		return Job{}, err
	}
	return j, nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// EditableError is the ErrConflict of an edit of j once it has started,
// nil while it may be edited. A job held after a failed attempt has
// started: its command ran, and its attempts are counted against
// max_retries. One put back to run again (`restart`, `dlq retry`) has
// its attempts anew, none spent: it may be edited.
func EditableError(j Job) error {
	switch {
	case j.State.Editable() && j.Attempts == 0:
		return nil
	case j.State.Editable():
		return fmt.Errorf("%w: job %s is %s after %s; only a job that has not started can be edited (cancel it and enqueue a new one, or release it as it is)",
			ErrConflict, j.ID, j.State, attempts(j.Attempts))
	}
	return fmt.Errorf("%w: job %s is %s; only a job that has not started (pending or held) can be edited", ErrConflict, j.ID, j.State)
}

// attempts is "1 attempt" or "N attempts".
func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

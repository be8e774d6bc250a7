package claim

import (
	"context"
)

// maxMaxRunning bounds a limit: more slots than any store has.
const maxMaxRunning = 1 << 20

// SetQueueLimit lets at most maxRunning jobs of queue run at once (0: no
// limit), from its commit on: the claim statement itself reads the limit,
// so no worker needs a restart, and idle workers wake at once to take up a
// raised one. A lowered limit stops no running job; the queue claims again
// once fewer than maxRunning of its jobs run. Durable. ErrInvalid for a bad
// name or a limit out of range.
func (s *Store) SetQueueLimit(ctx context.Context, queue string, maxRunning int) error {
	if !ValidID(queue) {
		return invalidf("queue %q is not valid: %s", queue, NameRule)
	}
	if maxRunning < 0 || maxRunning > maxMaxRunning {
		return invalidf("max running %d: give 0 (no limit) to %d", maxRunning, maxMaxRunning)
	}
	return s.engine.SetQueueLimit(ctx, queue, maxRunning, s.Now())
}

// RemoveQueue forgets queue's settings: its jobs run without limit again.
// ErrNotFound when the queue has none.
func (s *Store) RemoveQueue(ctx context.Context, queue string) error {
	ok, err := s.engine.RemoveQueue(ctx, queue)
	if err == nil && !ok {
		err = noSettings(queue)
	}
	return err
}

// noSettings is the ErrNotFound of a queue without settings, which is no
// job: its message does not say "no such job".
type noSettings string

func (q noSettings) Error() string { return "queue " + string(q) + " has no settings" }

func (q noSettings) Is(target error) bool { return target == ErrNotFound }

// Queues lists the queues that have settings, by name, each with how many
// of its jobs are processing now.
func (s *Store) Queues(ctx context.Context) ([]Queue, error) {
	return s.engine.Queues(ctx)
}

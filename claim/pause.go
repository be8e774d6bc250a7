package claim

import (
	"context"
	"fmt"
)

// AllQueues is the queue name that Pause and Resume take for every queue,
// and that Paused lists when every queue is paused. No queue can be named
// so (queue names are ids).
const AllQueues = "*"

// Pause stops every worker from claiming jobs of queue (AllQueues: of every
// queue) until Resume; jobs already running go on. It is durable, and
// idempotent: pausing a paused queue keeps its first pause time.
func (s *Store) Pause(ctx context.Context, queue string) error {
	if err := checkQueue(queue); err != nil {
		return err
	}
	_, err := s.engine.SetPaused(ctx, queue, true, s.Now())
	return err
}

// Resume lets workers claim jobs of queue again; AllQueues resumes every
// queue, whether paused one by one or all at once. Resuming a queue that is
// not paused does nothing. Workers waiting for work wake up at once.
// ErrConflict: queue is one queue, and every queue is paused (resume them
// all, or pause the others one by one).
func (s *Store) Resume(ctx context.Context, queue string) error {
	if err := checkQueue(queue); err != nil {
		return err
	}
	all, err := s.engine.SetPaused(ctx, queue, false, s.Now())
	if err != nil {
		return err
	}
	if all && queue != AllQueues {
		return fmt.Errorf("%w: every queue is paused, so %s stays paused; resume them all", ErrConflict, queue)
	}
	return nil
}

// Paused lists the paused queues by name (AllQueues first when every queue
// is paused); empty, not nil, when none is.
func (s *Store) Paused(ctx context.Context) ([]string, error) {
	return s.engine.Paused(ctx)
}

// PausedOf returns which of a worker's queues are paused, given the paused
// list of Paused: [AllQueues] when every queue is; for a worker of every
// queue (no queues), the whole list.
func PausedOf(paused, queues []string) []string {
	for _, p := range paused {
		if p == AllQueues {
			return []string{AllQueues}
		}
	}
	if len(queues) == 0 {
		return paused
	}
	var out []string
	for _, q := range queues {
		for _, p := range paused {
			if p == q {
				out = append(out, q)
			}
		}
	}
	return out
}

// Running counts the processing jobs of queue (AllQueues: of every queue).
func (s *Store) Running(ctx context.Context, queue string) (int, error) {
	counts, err := s.QueueCounts(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for q, c := range counts {
		if queue == AllQueues || q == queue {
			n += c[Processing]
		}
	}
	return n, nil
}

func checkQueue(queue string) error {
	if queue != AllQueues && !ValidID(queue) {
		return invalidf("queue %q is not valid: %s", queue, NameRule)
	}
	return nil
}

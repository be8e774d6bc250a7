package claim

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// inOrder says whether order leaves a chunk as it was.
func inOrder(order []int) bool {
	for k, i := range order {
		if k != i {
			return false
		}
	}
	return true
}

// streamChunk is how many jobs of a stream go to the engine at a time.
const streamChunk = 1000

// EnqueueStream stores the jobs of seq in one transaction, as they come:
// all of them, or none when any is refused or seq yields an error (the
// error names the job's place). each gets the results of the stored jobs,
// in seq's order, before the transaction commits: what it shows must wait
// for EnqueueStream to return nil, and it must not keep the slice, whose
// memory serves the next results. A job may wait (after) on jobs stored
// before or on earlier jobs of seq. Memory stays bounded whatever seq's
// length. It returns how many jobs seq held.
func (s *Store) EnqueueStream(ctx context.Context, seq iter.Seq2[NewJob, error], each func([]Result) error) (int, error) {
	cfg, err := s.Config(ctx)
	if err != nil {
		return 0, err
	}
	var (
		total int      // jobs read
		order []int    // the last chunk's order: rows[k] is chunk[order[k]]
		base  int      // the index in seq of the last chunk's first job
		fail  error    // seq's own error, or a job newRow refused
		rows  []NewRow // the last chunk's rows, reused: the engine keeps no row after its chunk
	)
	chunks := func(yield func(EnqueueParams, error) bool) {
		chunk := make([]NewJob, 0, streamChunk)
		flush := func() bool {
			base, order = total-len(chunk), nil
			if order, fail = orderAfter(chunk); fail != nil {
				yield(EnqueueParams{}, fail)
				return false
			}
			if cap(rows) < len(chunk) {
				rows = make([]NewRow, len(chunk))
			}
			rows = rows[:len(chunk)]
			for k, i := range order {
				if rows[k], fail = newRow(cfg, chunk[i], s.Now()); fail != nil {
					fail = fmt.Errorf("job %d: %w", base+i+1, fail)
					yield(EnqueueParams{}, fail)
					return false
				}
			}
			chunk = chunk[:0]
			return yield(EnqueueParams{Jobs: rows, Now: s.Now()}, nil)
		}
		for nj, err := range seq {
			if err != nil {
				fail = err
				yield(EnqueueParams{}, err)
				return
			}
			chunk, total = append(chunk, nj), total+1
			if len(chunk) == streamChunk && !flush() {
				return
			}
		}
		if len(chunk) > 0 {
			flush()
		}
	}
	// Why each pending job waits, as Get tells it, from the queues' pauses
	// and limits read once for the whole stream; unread, its own fields'
	// reasons only, as Enqueue gives.
	b, err := s.blockers(ctx)
	if err != nil {
		b = blockers{}
	}
	err = s.engine.EnqueueStream(ctx, chunks, func(rs []Result) error {
		now := s.Now()
		for k := range rs {
			rs[k].Job.PendingReason = b.reason(rs[k].Job, now)
		}
		if inOrder(order) {
			return each(rs)
		}
		out := make([]Result, len(rs))
		for k, i := range order {
			out[i] = rs[k]
		}
		return each(out)
	})
	var at *AtError
	switch {
	case fail != nil:
		return total, fail
	case errors.As(err, &at):
		return total, fmt.Errorf("job %d: %w", base+order[at.Index]+1, skippedDependency(at.Err, rows))
	case err != nil:
		return total, err
	case total == 0:
		return 0, invalidf("no job spec given; give a JSON object, or one per line")
	}
	return total, nil
}

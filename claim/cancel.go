package claim

import (
	"context"
	"fmt"
)

// Cancel stops job id for good. A pending or failed job is canceled at once
// (and the jobs waiting for it with `after` die, see EndDependents; the
// caller gives them their dead/ files). A processing job is marked: the
// worker that runs it, in whichever process, stops its processes (TERM,
// then KILL after stop-timeout) and ends the run canceled (EndCanceled);
// wait for that with Wait. Every other ending of a marked job's run ends it
// canceled too (see Engine), so a cancel committed while the job is
// unfinished always wins. It returns the job as the change left it:
// canceled, or processing with CancelAt set, the jobs that died with it,
// and changed: whether this call changed it (false: it was canceled
// already), read in the change's own transaction. Canceling a canceled job
// changes nothing and is no error. Errors: ErrNotFound; ErrConflict for a
// completed or dead job.
func (s *Store) Cancel(ctx context.Context, id string) (j Job, died []Job, changed bool, err error) {
	j, changed, err = s.engine.Cancel(ctx, CancelParams{ID: id, Now: s.Now()})
	if err != nil {
		return Job{}, nil, false, err
	}
	if !changed && j.State != Canceled {
		return Job{}, nil, false, fmt.Errorf("%w: job %s is %s already; only unfinished jobs can be canceled", ErrConflict, id, j.State)
	}
	if !changed || j.State != Canceled {
		return j, nil, changed, nil
	}
	died, err = s.EndDependents(ctx, id, Canceled)
	return j, died, true, err
}

// CancelQueue cancels every pending, failed and processing job of queue as
// Cancel does, in one statement, and returns them as the change left them,
// and the jobs that died with them: the dependents of all the jobs it
// canceled end in one more transaction (one each took 10 s for a queue
// of 15,000 jobs).
func (s *Store) CancelQueue(ctx context.Context, queue string) ([]Job, []Job, error) {
	if queue == AllQueues || !ValidID(queue) {
		return nil, nil, invalidf("queue %q is not valid: %s", queue, NameRule)
	}
	jobs, err := s.engine.CancelQueue(ctx, CancelParams{Queue: queue, Now: s.Now()})
	if err != nil {
		return nil, nil, err
	}
	var ended []EndDependentsParams
	now := s.Now()
	for _, j := range jobs {
		if j.State == Canceled {
			ended = append(ended, EndDependentsParams{ID: j.ID, State: Canceled, Cause: DependencyError(j), Now: now})
		}
	}
	if len(ended) == 0 {
		return jobs, nil, nil
	}
	died, err := s.engine.EndDependents(ctx, ended)
	if err != nil {
		return jobs, nil, fmt.Errorf("end the dependents of the jobs canceled: %w", err)
	}
	return jobs, died, nil
}

// CancelRequested returns the runs of worker workerID whose jobs `cancel`
// was asked of: the worker must stop them. Cheap (processing jobs are few,
// and found by index), so a worker may ask on every store change.
func (s *Store) CancelRequested(ctx context.Context, workerID string) ([]RunID, error) {
	return s.engine.CancelRequested(ctx, workerID)
}

// EndCanceled ends run r, which its worker stopped because its job was
// canceled: the run's outcome is canceled (with the exit code of its
// shell, if any), and the job is canceled. ErrLost: the run was recovered
// by another worker meanwhile. The caller ends the job's dependents
// (EndDependents).
func (s *Store) EndCanceled(ctx context.Context, r Run, exitCode *int) error {
	_, err := s.engine.Finish(ctx, FinishParams{Run: ending(r), State: Canceled, ExitCode: exitCode, Error: "canceled",
		Finished: true, Outcome: OutcomeCanceled, Durable: true, Now: endOf(r, s.Now())})
	return err
}

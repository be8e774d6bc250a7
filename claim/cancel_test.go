package claim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func mustCancel(tb testing.TB, s *claim.Store, id string) claim.Job {
	tb.Helper()
	j, _, _, err := s.Cancel(context.Background(), id)
	if err != nil {
		tb.Fatalf("Cancel(%s) = %v", id, err)
	}
	return j
}

func TestCancelPendingAndFailed(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "flaky", Command: "false", UniqueKey: "k"})
		mustEnqueue(t, s, claim.NewJob{ID: "waiting", Command: "true", Delay: time.Hour})
		j, r := mustClaim(t, s, claimant(t, "w"))
		if next, err := s.Fail(ctx, j, r, intp(1), "exit status 1", time.Hour); next != claim.Failed || err != nil {
			t.Fatalf("Fail = %s, %v; want failed", next, err)
		}
		clk.Advance(time.Second)
		for _, id := range []string{"flaky", "waiting"} {
			j, _, changed, err := s.Cancel(ctx, id)
			if err != nil || !changed || j.State != claim.Canceled || !j.FinishedAt.Equal(clk.Now()) || !j.CancelAt.Equal(clk.Now()) {
				t.Errorf("Cancel(%s) = %+v, changed %v, %v; want canceled at once, finished and canceled now", id, j, changed, err)
			}
		}
		if j := mustGet(t, s, "flaky"); j.Runs != 1 || j.LastError != "exit status 1" {
			t.Errorf("canceled failed job = %+v, want its one run and last error kept", j)
		}
		clk.Advance(2 * time.Hour) // past every backoff and delay: nothing is runnable all the same
		if j, _, err := s.Claim(ctx, claimant(t, "w")); !errors.Is(err, claim.ErrNoJob) {
			t.Errorf("Claim after cancel = %s, %v; want ErrNoJob", j.ID, err)
		}
		if more, err := s.HasWork(ctx, nil); more || err != nil {
			t.Errorf("HasWork = %v, %v; want false", more, err)
		}
		// A canceled job holds its unique_key no more.
		mustEnqueue(t, s, claim.NewJob{ID: "next", Command: "true", UniqueKey: "k"})
		// Canceling again is no error, changes nothing and says so.
		clk.Advance(time.Second)
		if j, _, changed, err := s.Cancel(ctx, "flaky"); err != nil || changed || j.State != claim.Canceled || j.FinishedAt.Equal(clk.Now()) {
			t.Errorf("second Cancel = %+v, changed %v, %v; want canceled, unchanged", j, changed, err)
		}
		counts, err := s.Counts(ctx)
		if err != nil || counts[claim.Canceled] != 2 || counts[claim.Pending] != 1 {
			t.Errorf("Counts = %v, %v; want 2 canceled, 1 pending", counts, err)
		}
	})
}

func TestCancelErrors(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		mustEnqueue(t, s, claim.NewJob{ID: "done", Command: "true"})
		_, r := mustClaim(t, s, claimant(t, "w"))
		if _, err := s.Complete(ctx, r); err != nil {
			t.Fatal(err)
		}
		mustKill(t, s, "dead")
		for id, want := range map[string]error{"done": claim.ErrConflict, "dead": claim.ErrConflict, "nosuch": claim.ErrNotFound} {
			if _, _, _, err := s.Cancel(ctx, id); !errors.Is(err, want) {
				t.Errorf("Cancel(%s) = %v, want %v", id, err, want)
			}
		}
		if j := mustGet(t, s, "done"); j.State != claim.Completed || !j.CancelAt.IsZero() {
			t.Errorf("refused cancel changed the job: %+v", j)
		}
	})
}

// A processing job is only marked; its worker learns of it through
// CancelRequested and ends the run with EndCanceled.
func TestCancelProcessing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "long", Command: "sleep 300"})
		mustEnqueue(t, s, claim.NewJob{ID: "other", Command: "sleep 300"})
		_, r := mustClaim(t, s, claimant(t, "w1"))
		mustClaim(t, s, claimant(t, "w2"))
		if got, err := s.CancelRequested(ctx, "w1"); len(got) != 0 || err != nil {
			t.Fatalf("CancelRequested before any cancel = %v, %v", got, err)
		}
		clk.Advance(time.Second)
		j := mustCancel(t, s, "long")
		if j.State != claim.Processing || !j.CancelAt.Equal(clk.Now()) || !j.FinishedAt.IsZero() || j.WorkerID != "w1" {
			t.Fatalf("Cancel(processing) = %+v, want still processing by w1, marked now", j)
		}
		if !j.UpdatedAt.Equal(t0) {
			t.Errorf("Cancel(processing) moved updated_at to %v, want its claim's %v: RUNNING FOR counts from it", j.UpdatedAt, t0)
		}
		clk.Advance(time.Second)
		if j := mustCancel(t, s, "long"); !j.CancelAt.Equal(t0.Add(time.Second)) {
			t.Errorf("second Cancel moved cancel_at to %v, want the first request kept", j.CancelAt)
		}
		got, err := s.CancelRequested(ctx, "w1")
		if err != nil || len(got) != 1 || got[0] != (claim.RunID{JobID: "long", Attempt: 1}) {
			t.Fatalf("CancelRequested(w1) = %v, %v; want [long 1]", got, err)
		}
		if got, _ := s.CancelRequested(ctx, "w2"); len(got) != 0 {
			t.Errorf("CancelRequested(w2) = %v, want none: w2 runs nothing canceled", got)
		}
		if err := s.EndCanceled(ctx, r, intp(143)); err != nil {
			t.Fatalf("EndCanceled = %v", err)
		}
		j = mustGet(t, s, "long")
		if j.State != claim.Canceled || j.WorkerID != "" || !j.FinishedAt.Equal(clk.Now()) || j.Attempts != 1 {
			t.Errorf("job after EndCanceled = %+v, want canceled, no worker, finished now", j)
		}
		run := mustRuns(t, s, "long")[0]
		if run.Outcome != claim.OutcomeCanceled || run.ExitCode == nil || *run.ExitCode != 143 || run.EndedAt.IsZero() {
			t.Errorf("run after EndCanceled = %+v, want outcome canceled, exit 143, ended", run)
		}
		if got, _ := s.CancelRequested(ctx, "w1"); len(got) != 0 {
			t.Errorf("CancelRequested after the run ended = %v, want none", got)
		}
		if err := s.EndCanceled(ctx, r, nil); !errors.Is(err, claim.ErrLost) {
			t.Errorf("second EndCanceled = %v, want ErrLost", err)
		}
	})
}

// Whatever ends a run after a cancel was asked of its job — a completion,
// a failure with retries left, a last failure, a hard stop, a recovery
// after a crash, a completion that claims the next job — ends the job
// canceled, keeps the run's own outcome, and never makes it runnable.
func TestCancelWinsEveryEnd(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ends := []struct {
			name    string
			outcome string
			end     func(s *claim.Store, j claim.Job, r claim.Run) error
		}{
			{"complete", claim.OutcomeCompleted, func(s *claim.Store, j claim.Job, r claim.Run) error {
				next, err := s.Complete(context.Background(), r)
				if err == nil && next != claim.Canceled {
					return errors.New("Complete returned " + string(next) + ", want canceled")
				}
				return err
			}},
			{"fail with retries left", claim.OutcomeFailed, func(s *claim.Store, j claim.Job, r claim.Run) error {
				next, err := s.Fail(context.Background(), j, r, intp(1), "exit status 1", time.Hour)
				if err == nil && next != claim.Canceled {
					return errors.New("Fail returned " + string(next) + ", want canceled")
				}
				return err
			}},
			{"last failure", claim.OutcomeFailed, func(s *claim.Store, j claim.Job, r claim.Run) error {
				j.Attempts = j.MaxRetries // as if this were the last run allowed
				next, err := s.Fail(context.Background(), j, r, intp(1), "exit status 1", time.Hour)
				if err == nil && next != claim.Canceled {
					return errors.New("Fail returned " + string(next) + ", want canceled, not dead")
				}
				return err
			}},
			{"hard stop", claim.OutcomeInterrupted, func(s *claim.Store, j claim.Job, r claim.Run) error {
				return s.Release(context.Background(), r, "interrupted")
			}},
			{"crash", claim.OutcomeLost, func(s *claim.Store, j claim.Job, r claim.Run) error {
				next, err := s.Recover(context.Background(), claim.InFlight{Run: r})
				if err == nil && next != claim.Canceled {
					return errors.New("Recover returned " + string(next) + ", want canceled")
				}
				return err
			}},
			{"complete and claim", claim.OutcomeCompleted, func(s *claim.Store, j claim.Job, r claim.Run) error {
				_, _, ended, err := s.CompleteAndClaim(context.Background(), r, claim.Claimant{WorkerID: r.WorkerID, Host: "h", Lease: time.Minute})
				if err != nil && !errors.Is(err, claim.ErrNoJob) {
					return err
				}
				if ended != claim.Canceled {
					return errors.New("CompleteAndClaim ended the job " + string(ended) + ", want canceled")
				}
				return nil
			}},
		}
		for _, tc := range ends {
			t.Run(tc.name, func(t *testing.T) {
				s, clk := db.openClocked(t)
				id := "a-" + strings.ReplaceAll(tc.name, " ", "-") // one database for every ending
				mustEnqueue(t, s, claim.NewJob{ID: id, Command: "true"})
				j, r := mustClaim(t, s, claimant(t, "w"))
				mustCancel(t, s, id)
				clk.Advance(time.Second)
				if err := tc.end(s, j, r); err != nil {
					t.Fatal(err)
				}
				j = mustGet(t, s, id)
				if j.State != claim.Canceled || !j.FinishedAt.Equal(clk.Now()) || j.WorkerID != "" {
					t.Errorf("job = %+v, want canceled, finished now", j)
				}
				if run := mustRuns(t, s, id)[0]; run.Outcome != tc.outcome {
					t.Errorf("run outcome = %q, want %q", run.Outcome, tc.outcome)
				}
				clk.Advance(2 * time.Hour)
				if j, _, err := s.Claim(t.Context(), claimant(t, "w")); !errors.Is(err, claim.ErrNoJob) {
					t.Errorf("Claim = %s, %v; want ErrNoJob", j.ID, err)
				}
			})
		}
	})
}

func TestCancelQueue(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		mustEnqueue(t, s, claim.NewJob{ID: "run", Command: "true", Queue: "q"})
		mustClaim(t, s, claimant(t, "w"))
		mustEnqueue(t, s, claim.NewJob{ID: "wait", Command: "true", Queue: "q"})
		mustEnqueue(t, s, claim.NewJob{ID: "elsewhere", Command: "true", Queue: "r"})
		jobs, _, err := s.CancelQueue(ctx, "q")
		if err != nil || len(jobs) != 2 {
			t.Fatalf("CancelQueue(q) = %v, %v; want run and wait", jobs, err)
		}
		states := map[string]claim.State{}
		for _, j := range jobs {
			states[j.ID] = j.State
		}
		if states["run"] != claim.Processing || states["wait"] != claim.Canceled {
			t.Errorf("CancelQueue(q) states = %v, want run processing (marked), wait canceled", states)
		}
		if j := mustGet(t, s, "elsewhere"); j.State != claim.Pending {
			t.Errorf("job of another queue = %s, want pending", j.State)
		}
		if jobs, _, err := s.CancelQueue(ctx, "empty"); len(jobs) != 0 || err != nil {
			t.Errorf("CancelQueue(empty) = %v, %v; want nothing", jobs, err)
		}
		for _, q := range []string{"*", "", "a b"} {
			if _, _, err := s.CancelQueue(ctx, q); !errors.Is(err, claim.ErrInvalid) {
				t.Errorf("CancelQueue(%q) = %v, want ErrInvalid", q, err)
			}
		}
	})
}

// TestCancelQueueEndsDependentsAtOnce: cancel --queue of a big queue ends
// the dependents of all the jobs it canceled in one call of the engine
// (one transaction), not one each (15,000 took 10 s), and they end as
// they would one by one: dead, naming the canceled job, down the chain,
// those of the first canceled job first.
func TestCancelQueueEndsDependentsAtOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, e := db.openCounted(t)
		for i := range 40 {
			mustEnqueue(t, s, claim.NewJob{ID: fmt.Sprintf("q%02d", i), Command: "true", Queue: "q"})
		}
		mustEnqueue(t, s, claim.NewJob{ID: "after5", Command: "true", Queue: "r", After: []string{"q05"}})
		mustEnqueue(t, s, claim.NewJob{ID: "after5b", Command: "true", Queue: "r", After: []string{"after5"}})
		mustEnqueue(t, s, claim.NewJob{ID: "after30", Command: "true", Queue: "r", After: []string{"q30", "q31"}})
		mustEnqueue(t, s, claim.NewJob{ID: "inside", Command: "true", Queue: "q", After: []string{"q07"}})
		e.Calls("EndDependents")
		jobs, died, err := s.CancelQueue(ctx, "q")
		if err != nil || len(jobs) != 41 {
			t.Fatalf("CancelQueue(q) = %d jobs, %v; want 41", len(jobs), err)
		}
		if n := e.Calls("EndDependents"); n != 1 {
			t.Errorf("CancelQueue(q) of 41 jobs ended dependents in %d calls, want 1", n)
		}
		if got, want := ids(died), "after5 after5b after30"; got != want {
			t.Errorf("CancelQueue(q) died = %s, want %s", got, want)
		}
		for id, want := range map[string]string{"after5": "dependency q05 was canceled",
			"after5b": "dependency q05 was canceled (via after5)", "after30": "dependency q30 was canceled"} {
			if j := mustGet(t, s, id); j.State != claim.Dead || j.LastError != want || j.DeadBy == "" {
				t.Errorf("%s = %s %q (dead_by %q), want dead %q", id, j.State, j.LastError, j.DeadBy, want)
			}
		}
		if j := mustGet(t, s, "inside"); j.State != claim.Canceled {
			t.Errorf("a job of q waiting for another = %s, want canceled", j.State)
		}
	})
}

// Wait returns for a canceled job.
func TestWaitCanceled(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true"})
		done := make(chan error, 1)
		go func() {
			jobs, err := s.Wait(t.Context(), []string{"a"}, time.Hour)
			if err == nil && jobs[0].State != claim.Canceled {
				err = errors.New("Wait returned " + string(jobs[0].State))
			}
			done <- err
		}()
		mustCancel(t, db.open(t), "a")
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Wait did not return after the job was canceled from another store")
		}
	})
}

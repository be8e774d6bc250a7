package claim_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// finish runs job id once as worker w: completed when ok, else failed.
func finish(tb testing.TB, s *claim.Store, id string, ok bool) {
	tb.Helper()
	j, r := mustClaim(tb, s, claimant(tb, "w"))
	var err error
	switch {
	case j.ID != id:
		tb.Fatalf("claimed %s, want %s", j.ID, id)
	case ok:
		_, err = s.Complete(tb.Context(), r)
	default:
		_, err = s.Fail(tb.Context(), j, r, intp(1), "exit status 1", time.Hour)
	}
	if err != nil {
		tb.Fatal(err)
	}
}

func TestRestart(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "done", Command: "true"})
		finish(t, s, "done", true)
		mustKill(t, s, "dead")
		mustEnqueue(t, s, claim.NewJob{ID: "stopped", Command: "true"})
		mustCancel(t, s, "stopped")
		clk.Advance(time.Minute)
		for _, id := range []string{"done", "dead", "stopped"} {
			before := mustGet(t, s, id)
			j, err := s.Restart(ctx, id)
			if err != nil {
				t.Fatalf("Restart(%s) = %v", id, err)
			}
			if j.State != claim.Pending || j.Attempts != 0 || j.Runs != before.Runs || j.LastError != "" ||
				j.ExitCode != nil || !j.FinishedAt.IsZero() || !j.CancelAt.IsZero() || !j.RunAfter.Equal(clk.Now()) {
				t.Errorf("Restart(%s) = %+v, want pending now, attempts 0, runs kept, result forgotten", id, j)
			}
		}
		// New runs number on: the old run and its log paths stay.
		old := mustRuns(t, s, "done")
		finish(t, s, "done", true)
		runs := mustRuns(t, s, "done")
		if len(runs) != 2 || runs[0].StdoutPath != old[0].StdoutPath || runs[0].Outcome != old[0].Outcome || runs[1].Attempt != 2 || runs[1].StdoutPath == old[0].StdoutPath {
			t.Errorf("runs after restart = %+v, want the first kept and a second with its own logs", runs)
		}
		if j := mustGet(t, s, "done"); j.Attempts != 1 || j.State != claim.Completed {
			t.Errorf("restarted job = %+v, want completed with attempts 1", j)
		}
		// A job canceled before its run_at waits for it again; one whose
		// run_at passed meanwhile runs at once.
		at := clk.Now().Add(time.Hour)
		mustEnqueue(t, s, claim.NewJob{ID: "later", Command: "true", RunAt: at})
		mustCancel(t, s, "later")
		if j, err := s.Restart(ctx, "later"); err != nil || !j.RunAfter.Equal(at) {
			t.Errorf("Restart(later) = %v, %v; want run_after %v, its run_at", j.RunAfter, err, at)
		}
		mustCancel(t, s, "later")
		clk.Advance(2 * time.Hour)
		if j, err := s.Restart(ctx, "later"); err != nil || !j.RunAfter.Equal(clk.Now()) {
			t.Errorf("Restart(later) after its run_at = %v, %v; want now %v", j.RunAfter, err, clk.Now())
		}
	})
}

// TestRearmKeepsRunAt: the dependents a restart or a retry brings back
// wait for their own run_at still, as a restarted job does; one whose
// run_at passed runs at once.
func TestRearmKeepsRunAt(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		at := clk.Now().Add(time.Hour)
		mustEnqueue(t, s, claim.NewJob{ID: "root", Command: "true"})
		mustEnqueue(t, s, claim.NewJob{ID: "leaf", Command: "true", After: []string{"root"}, RunAt: at})
		mustEnqueue(t, s, claim.NewJob{ID: "soon", Command: "true", After: []string{"root"}})
		kill := func() {
			t.Helper()
			mustCancel(t, s, "root")
			if _, err := s.EndDependents(ctx, "root", claim.Dead); err != nil {
				t.Fatal(err)
			}
		}
		kill()
		clk.Advance(time.Minute)
		if _, err := s.Restart(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		if j := mustGet(t, s, "leaf"); j.State != claim.Pending || !j.RunAfter.Equal(at) {
			t.Errorf("leaf after restart of root = %s, run_after %v; want pending, run_after %v (its run_at)", j.State, j.RunAfter, at)
		}
		if j := mustGet(t, s, "soon"); j.State != claim.Pending || !j.RunAfter.Equal(clk.Now()) {
			t.Errorf("soon after restart of root = %s, run_after %v; want pending, now %v", j.State, j.RunAfter, clk.Now())
		}
		finish(t, s, "root", true)
		finish(t, s, "soon", true)
		if j, r, err := s.Claim(ctx, claimant(t, "w")); !errors.Is(err, claim.ErrNoJob) {
			t.Errorf("Claim with root done, an hour before leaf's run_at = %s %+v, %v; want ErrNoJob", j.ID, r, err)
		}
		// The same through the dead letters: a dead job retried brings its
		// dependents back, each to its own run_at.
		mustEnqueue(t, s, claim.NewJob{ID: "root2", Command: "false", MaxRetries: intp(1)})
		mustEnqueue(t, s, claim.NewJob{ID: "leaf2", Command: "true", After: []string{"root2"}, RunAt: at})
		die := func() {
			t.Helper()
			finish(t, s, "root2", false)
			if _, err := s.EndDependents(ctx, "root2", claim.Dead); err != nil {
				t.Fatal(err)
			}
		}
		die()
		if j := mustGet(t, s, "leaf2"); j.State != claim.Dead {
			t.Fatalf("leaf2 = %s, want dead with root2", j.State)
		}
		if _, err := s.Retry(ctx, "root2"); err != nil {
			t.Fatal(err)
		}
		if j := mustGet(t, s, "leaf2"); j.State != claim.Pending || !j.RunAfter.Equal(at) {
			t.Errorf("leaf2 after retry of root2 = %s, run_after %v; want pending, run_after %v", j.State, j.RunAfter, at)
		}
		clk.Advance(2 * time.Hour)
		die()
		if _, err := s.Retry(ctx, "root2"); err != nil {
			t.Fatal(err)
		}
		if j := mustGet(t, s, "leaf2"); !j.RunAfter.Equal(clk.Now()) {
			t.Errorf("leaf2 retried after its run_at: run_after %v, want now %v", j.RunAfter, clk.Now())
		}
	})
}

func TestRestartErrors(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		mustEnqueue(t, s, claim.NewJob{ID: "pending", Command: "true", UniqueKey: "k"})
		mustEnqueue(t, s, claim.NewJob{ID: "old", Command: "true"})
		for id, want := range map[string]error{"pending": claim.ErrConflict, "nosuch": claim.ErrNotFound} {
			if _, err := s.Restart(ctx, id); !errors.Is(err, want) {
				t.Errorf("Restart(%s) = %v, want %v", id, err, want)
			}
			if err := s.Remove(ctx, id); !errors.Is(err, want) {
				t.Errorf("Remove(%s) = %v, want %v", id, err, want)
			}
		}
		// A finished job whose unique_key a live job holds stays finished.
		mustCancel(t, s, "pending")
		mustEnqueue(t, s, claim.NewJob{ID: "holder", Command: "true", UniqueKey: "k"})
		if _, err := s.Restart(ctx, "pending"); !errors.Is(err, claim.ErrConflict) || !strings.Contains(err.Error(), `unique_key "k", which job holder (pending) holds`) {
			t.Errorf("Restart with the unique_key held = %v, want ErrConflict naming the unique_key and holder, pending", err)
		}
		if j := mustGet(t, s, "pending"); j.State != claim.Canceled {
			t.Errorf("refused restart left the job %s, want canceled", j.State)
		}
	})
}

func TestRestartAll(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		for _, id := range []string{"c1", "c2", "keep"} {
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "true"})
		}
		mustCancel(t, s, "c1")
		mustCancel(t, s, "c2")
		jobs, err := s.RestartAll(ctx, claim.Canceled)
		if err != nil || len(jobs) != 2 || jobs[0].State != claim.Pending {
			t.Fatalf("RestartAll(canceled) = %v, %v; want c1 and c2 pending", jobs, err)
		}
		if _, err := s.RestartAll(ctx, claim.Pending); !errors.Is(err, claim.ErrInvalid) {
			t.Errorf("RestartAll(pending) = %v, want ErrInvalid", err)
		}
	})
}

func TestRemove(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		mustEnqueue(t, s, claim.NewJob{ID: "done", Command: "true"})
		finish(t, s, "done", true)
		mustEnqueue(t, s, claim.NewJob{ID: "stopped", Command: "true"})
		mustCancel(t, s, "stopped")
		mustKill(t, s, "dead")
		for _, id := range []string{"done", "stopped", "dead"} {
			if err := s.Remove(ctx, id); err != nil {
				t.Fatalf("Remove(%s) = %v", id, err)
			}
			if _, err := s.Get(ctx, id); !errors.Is(err, claim.ErrNotFound) {
				t.Errorf("Get(%s) after Remove = %v, want ErrNotFound", id, err)
			}
			if runs := mustRuns(t, s, id); len(runs) != 0 {
				t.Errorf("runs of %s after Remove = %v, want none", id, runs)
			}
		}
		counts, err := s.Counts(ctx)
		if err != nil || counts[claim.Completed]+counts[claim.Canceled]+counts[claim.Dead] != 0 {
			t.Errorf("Counts after Remove = %v, %v; want no finished jobs", counts, err)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "running", Command: "true"})
		mustClaim(t, s, claimant(t, "w"))
		if err := s.Remove(ctx, "running"); !errors.Is(err, claim.ErrConflict) {
			t.Errorf("Remove(processing) = %v, want ErrConflict", err)
		}
	})
}

package claim_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// TestCompleteAndClaim: the finished run is completed and the next job is
// claimed, as Complete then Claim would; with nothing left, the run is
// completed and the answer is ErrNoJob.
func TestCompleteAndClaim(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		c := claimant(t, "w")
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true"})
		mustEnqueue(t, s, claim.NewJob{ID: "b", Command: "true"})
		_, ra := mustClaim(t, s, c)

		j, rb, ended, err := s.CompleteAndClaim(ctx, ra, c)
		if err != nil || ended != claim.Completed || j.ID != "b" || j.State != claim.Processing || rb.JobID != "b" || rb.Attempt != 1 {
			t.Fatalf("CompleteAndClaim(a) = %s %s, run %+v, ended %q, %v; want a completed, b processing", j.ID, j.State, rb, ended, err)
		}
		if a := mustGet(t, s, "a"); a.State != claim.Completed || a.ExitCode == nil || *a.ExitCode != 0 || a.FinishedAt.IsZero() {
			t.Errorf("a after CompleteAndClaim = %+v, want completed with exit 0", a)
		}
		if runs := mustRuns(t, s, "a"); runs[0].Outcome != claim.OutcomeCompleted || runs[0].EndedAt.IsZero() {
			t.Errorf("run of a = %+v, want completed and ended", runs[0])
		}
		if runs := mustRuns(t, s, "b"); len(runs) != 1 || runs[0].WorkerID != "w" {
			t.Errorf("runs of b = %+v, want one by w", runs)
		}

		_, _, ended, err = s.CompleteAndClaim(ctx, rb, c)
		if !errors.Is(err, claim.ErrNoJob) || ended != claim.Completed {
			t.Fatalf("CompleteAndClaim(b) on an empty queue = ended %q, %v; want completed, ErrNoJob", ended, err)
		}
		if b := mustGet(t, s, "b"); b.State != claim.Completed {
			t.Errorf("b after CompleteAndClaim with nothing left = %s, want completed", b.State)
		}
		checkCounts(t, s, "CompleteAndClaim")
	})
}

// TestCompleteAndClaimLost: a run recovered meanwhile is reported lost and
// left alone, and the claim happens all the same.
func TestCompleteAndClaimLost(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		c := claimant(t, "w")
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true"})
		_, ra := mustClaim(t, s, c)
		if _, err := s.Recover(ctx, mustInFlight(t, s)); err != nil {
			t.Fatal(err)
		}
		j, _, ended, err := s.CompleteAndClaim(ctx, ra, c)
		if err != nil || ended != "" || j.ID != "a" || j.Runs != 2 {
			t.Fatalf("CompleteAndClaim of a lost run = %s run %d, ended %q, %v; want lost, a claimed again as run 2", j.ID, j.Runs, ended, err)
		}
		if runs := mustRuns(t, s, "a"); runs[0].Outcome != claim.OutcomeLost {
			t.Errorf("lost run = %+v, want outcome still lost", runs[0])
		}
	})
}

// TestNoDoubleClaimCompleteAndClaim: slots that chain CompleteAndClaim over
// two Stores on one file run every job exactly once.
func TestNoDoubleClaimCompleteAndClaim(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		claimConcurrently(t, db, 1000, 2, 4, false, chain)
	})
}

// chain is drain with CompleteAndClaim, as a busy worker slot runs.
func chain(ctx context.Context, s *claim.Store, c claim.Claimant, claimed func(id string)) error {
	j, r, err := s.Claim(ctx, c)
	for err == nil {
		if j.WorkerID != c.WorkerID || r.JobID != j.ID {
			return fmt.Errorf("%s: claimed job %s with run of %s for worker %s", c.WorkerID, j.ID, r.JobID, j.WorkerID)
		}
		claimed(j.ID)
		var ended claim.State
		j, r, ended, err = s.CompleteAndClaim(ctx, r, c)
		if ended == "" && (err == nil || errors.Is(err, claim.ErrNoJob)) {
			return fmt.Errorf("%s: run lost without a reaper", c.WorkerID)
		}
	}
	if errors.Is(err, claim.ErrNoJob) {
		return nil
	}
	return fmt.Errorf("%s: %w", c.WorkerID, err)
}

// TestNextRunAfter: the earliest not-before time still ahead, among pending
// and failed jobs of the queues asked for.
func TestNextRunAfter(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		next := func(queues ...string) time.Time {
			t.Helper()
			at, err := s.NextRunAfter(ctx, queues)
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
		if at := next(); !at.IsZero() {
			t.Errorf("NextRunAfter on an empty store = %v, want zero", at)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "now", Command: "true"})
		if at := next(); !at.IsZero() {
			t.Errorf("NextRunAfter with only a runnable job = %v, want zero", at)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "later", Command: "true", Delay: time.Hour})
		mustEnqueue(t, s, claim.NewJob{ID: "other", Command: "true", Delay: time.Minute, Queue: "other"})
		if at := next(); !at.Equal(t0.Add(time.Minute)) {
			t.Errorf("NextRunAfter() = %v, want %v", at, t0.Add(time.Minute))
		}
		if at := next("default"); !at.Equal(t0.Add(time.Hour)) {
			t.Errorf("NextRunAfter(default) = %v, want %v", at, t0.Add(time.Hour))
		}
		c := claimant(t, "w")
		c.Queues = []string{"default"}
		j, r := mustClaim(t, s, c)
		if _, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); err != nil {
			t.Fatal(err)
		}
		if at, want := next("default"), t0.Add(2*time.Second); !at.Equal(want) {
			t.Errorf("NextRunAfter(default) after a failure = %v, want the backoff's end %v", at, want)
		}
		clk.Advance(2 * time.Hour)
		if at := next(); !at.IsZero() {
			t.Errorf("NextRunAfter once everything is due = %v, want zero", at)
		}
	})
}

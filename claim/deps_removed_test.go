package claim_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// dieAlone makes job id (the next to claim) dead without ending its
// dependents, as a worker that crashed right after the death leaves them.
func dieAlone(t *testing.T, s *claim.Store, id string) {
	t.Helper()
	j, r := mustClaim(t, s, claimant(t, "w"))
	if j.ID != id {
		t.Fatalf("claimed %s, want %s", j.ID, id)
	}
	if next, err := s.Fail(t.Context(), j, r, intp(1), "exit status 1", time.Hour); err != nil || next != claim.Dead {
		t.Fatalf("Fail(%s) = %s, %v; want dead", id, next, err)
	}
}

func wantConflict(t *testing.T, what string, err error, words ...string) {
	t.Helper()
	if !errors.Is(err, claim.ErrConflict) {
		t.Errorf("%s = %v, want ErrConflict", what, err)
		return
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s = %v, want it to say %q", what, err, w)
		}
	}
}

// A job that unfinished jobs wait for is not removed (rm, dlq purge,
// purge): they would wait for ever.
func TestWaitedForJobIsNotRemoved(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		one := 1
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{{ID: "a", Command: "false", MaxRetries: &one}, job("b", "a")}); err != nil {
			t.Fatal(err)
		}
		dieAlone(t, s, "a")
		wantConflict(t, "Remove(a) while b waits", s.Remove(ctx, "a"), "waited for by b")
		wantConflict(t, "Purge(a) while b waits", s.Purge(ctx, "a"), "waited for by b")
		gone, err := s.PurgeFinished(ctx, claim.Dead, time.Now().Add(time.Hour))
		if err != nil || len(gone) != 0 {
			t.Errorf("PurgeFinished(dead) while b waits for a = %v, %v; want nothing purged", gone, err)
		}
		if j := mustGet(t, s, "a"); j.State != claim.Dead {
			t.Errorf("a = %s after the refusals, want dead, still there", j.State)
		}
		if _, err := s.EndDependents(ctx, "a", claim.Dead); err != nil {
			t.Fatal(err)
		}
		// b is dead now, so nothing unfinished waits for a.
		if err := s.Remove(ctx, "a"); err != nil {
			t.Errorf("Remove(a) once b is dead = %v", err)
		}
	})
}

// A job re-driven (dlq retry, restart) while a dependency it still waits
// for is removed, dead or canceled is refused, saying what to do: it would
// be pending for ever.
func TestReDriveOfABlockedJobIsRefused(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		one := 1
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{{ID: "a", Command: "false", MaxRetries: &one}, job("b", "a"),
			job("c"), job("d", "c")}); err != nil {
			t.Fatal(err)
		}
		dieAlone(t, s, "a")
		if _, err := s.EndDependents(ctx, "a", claim.Dead); err != nil {
			t.Fatal(err)
		}
		_, err := s.Retry(ctx, "b")
		wantConflict(t, "Retry(b) while a is dead", err, "job a, which is dead", "queuectl dlq retry a")
		if err := s.Remove(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		_, err = s.Retry(ctx, "b")
		wantConflict(t, "Retry(b) once a is removed", err, "job a, which was removed")
		_, err = s.Restart(ctx, "b")
		wantConflict(t, "Restart(b) once a is removed", err, "job a, which was removed")
		if all, err := s.RetryAll(ctx); err != nil || len(all) != 0 {
			t.Errorf("RetryAll once a is removed = %v, %v; want b left dead", ids(all), err)
		}
		if j := mustGet(t, s, "b"); j.State != claim.Dead {
			t.Errorf("b = %s after the refusals, want dead", j.State)
		}

		// A canceled dependency: restart it, which re-arms its dependent.
		if _, _, _, err := s.Cancel(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EndDependents(ctx, "c", claim.Canceled); err != nil {
			t.Fatal(err)
		}
		_, err = s.Restart(ctx, "d")
		wantConflict(t, "Restart(d) while c is canceled", err, "job c, which is canceled", "queuectl restart c")
		if _, err := s.Restart(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if j := mustGet(t, s, "d"); j.State != claim.Pending || j.Waiting != 1 {
			t.Errorf("d after restart of c = %s waiting %d, want pending, waiting 1", j.State, j.Waiting)
		}
		complete(t, s, "c")
		complete(t, s, "d")
	})
}

// TestRetryAllLeavesDeadBelowABlockedJob: a → b → c, all dead, a removed.
// dlq retry --all leaves b dead (it waits for a removed job), and so c,
// which waits for b: pending, it would wait for a dead job for ever, shown
// as waiting, until a worker's start-up killed it again. A chain that can
// run is re-driven whole, in one call, whatever order its jobs died in.
func TestRetryAllLeavesDeadBelowABlockedJob(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		one := 1
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{{ID: "a", Command: "false", MaxRetries: &one}, job("b", "a"), job("c", "b"),
			{ID: "x", Command: "false", MaxRetries: &one}, job("y", "x"), job("z", "y")}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"a", "x"} {
			dieAlone(t, s, id)
			if _, err := s.EndDependents(ctx, id, claim.Dead); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Remove(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		all, err := s.RetryAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(all); got != "x y z" {
			t.Errorf("RetryAll = %s; want x y z, and b and c left dead", got)
		}
		if left, err := s.BlockedDead(ctx); err != nil || ids(left) != "b c" {
			t.Errorf("BlockedDead = %s, %v; want b c, left dead for their dependencies", ids(left), err)
		}
		for _, id := range []string{"b", "c"} {
			if j := mustGet(t, s, id); j.State != claim.Dead {
				t.Errorf("%s = %s after RetryAll, want dead", id, j.State)
			}
		}
		if left, err := s.EndLeftDependents(ctx); err != nil || len(left) != 0 {
			t.Errorf("EndLeftDependents = %v, %v; want none: no pending job waits for a dead one", ids(left), err)
		}
	})
}

// TestRestartAllLeavesBlockedJobs: restart --all --state dead does what
// dlq retry --all does with a chain whose head was removed: b waits for a
// removed job and c for b, so both stay dead instead of pending for ever
// (restart b alone is refused). A chain that can run restarts whole.
func TestRestartAllLeavesBlockedJobs(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		one := 1
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{{ID: "a", Command: "false", MaxRetries: &one}, job("b", "a"), job("c", "b"),
			{ID: "x", Command: "false", MaxRetries: &one}, job("y", "x"), job("z", "y")}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"a", "x"} {
			dieAlone(t, s, id)
			if _, err := s.EndDependents(ctx, id, claim.Dead); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Remove(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		all, err := s.RestartAll(ctx, claim.Dead)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(all); got != "x y z" {
			t.Errorf("RestartAll(dead) = %s; want x y z, and b and c left dead", got)
		}
		for _, id := range []string{"b", "c"} {
			if j := mustGet(t, s, id); j.State != claim.Dead {
				t.Errorf("%s = %s after RestartAll, want dead", id, j.State)
			}
		}
	})
}

package claim_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// complete claims the next job, which must be want, and completes it.
func complete(tb testing.TB, s *claim.Store, want string) {
	tb.Helper()
	j, r := mustClaim(tb, s, claimant(tb, "w"))
	if j.ID != want {
		tb.Fatalf("claimed %s, want %s", j.ID, want)
	}
	if _, err := s.Complete(tb.Context(), r); err != nil {
		tb.Fatal(err)
	}
}

func noClaim(tb testing.TB, s *claim.Store) {
	tb.Helper()
	if j, _, err := s.Claim(tb.Context(), claimant(tb, "w")); !errors.Is(err, claim.ErrNoJob) {
		tb.Fatalf("Claim = %s, %v; want ErrNoJob: every job left waits", j.ID, err)
	}
}

func job(id string, after ...string) claim.NewJob {
	return claim.NewJob{ID: id, Command: "true", After: after}
}

// TestAfterFanOutAndJoin: a → {b, c} → d, enqueued as one batch with d
// first. Each runs only once what it waits for completed.
func TestAfterFanOutAndJoin(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		rs, err := s.EnqueueAll(t.Context(), []claim.NewJob{job("d", "b", "c"), job("b", "a"), job("c", "a"), job("a")})
		if err != nil {
			t.Fatal(err)
		}
		if rs[0].Job.ID != "d" || rs[0].Job.Waiting != 2 || !slices.Equal(rs[0].Job.WaitingOn, []string{"b", "c"}) {
			t.Errorf("EnqueueAll result 0 = %s waiting %d on %v, want d waiting 2 on [b c]", rs[0].Job.ID, rs[0].Job.Waiting, rs[0].Job.WaitingOn)
		}
		if d := mustGet(t, s, "d"); d.State != claim.Pending || !slices.Equal(d.WaitingOn, []string{"b", "c"}) {
			t.Errorf("d = %s waiting on %v, want pending waiting on [b c]", d.State, d.WaitingOn)
		}
		complete(t, s, "a")
		j1, r1 := mustClaim(t, s, claimant(t, "w"))
		j2, r2 := mustClaim(t, s, claimant(t, "w"))
		if got := []string{j1.ID, j2.ID}; !slices.Equal(got, []string{"b", "c"}) {
			t.Fatalf("after a completed, claimed %v, want [b c]", got)
		}
		noClaim(t, s)
		if _, err := s.Complete(t.Context(), r1); err != nil {
			t.Fatal(err)
		}
		if d := mustGet(t, s, "d"); !slices.Equal(d.WaitingOn, []string{"c"}) {
			t.Errorf("d waits on %v after b completed, want [c]", d.WaitingOn)
		}
		noClaim(t, s)
		// CompleteAndClaim counts down as Complete does, and claims d in the
		// same transaction.
		next, _, ended, err := s.CompleteAndClaim(t.Context(), r2, claimant(t, "w"))
		if err != nil || ended != claim.Completed || next.ID != "d" || next.Waiting != 0 || next.WaitingOn != nil {
			t.Fatalf("CompleteAndClaim(c) = %s (waiting %d %v), ended %q, %v; want d", next.ID, next.Waiting, next.WaitingOn, ended, err)
		}
	})
}

func TestAfterCompletedDependencyIsMet(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		mustEnqueue(t, s, job("a"))
		complete(t, s, "a")
		b := mustEnqueue(t, s, job("b", "a"))
		if b.Waiting != 0 || b.WaitingOn != nil {
			t.Errorf("b after a completed job waits %d on %v, want nothing", b.Waiting, b.WaitingOn)
		}
		complete(t, s, "b")
	})
}

func TestAfterRefusals(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		mustEnqueue(t, s, job("a"))
		for _, tt := range []struct {
			batch []claim.NewJob
			is    error
			want  string
		}{
			{[]claim.NewJob{job("x", "a", "nope", "gone")}, claim.ErrInvalid, "after: no job gone, nope"},
			{[]claim.NewJob{job("x", "y"), job("y", "z"), job("z", "x")}, claim.ErrInvalid, "jobs x → y → z → x wait for each other"},
			{[]claim.NewJob{job("x", "x")}, claim.ErrInvalid, "jobs x → x wait for each other"},
		} {
			_, err := s.EnqueueAll(ctx, tt.batch)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("EnqueueAll(%v) = %v, want %v containing %q", tt.batch, err, tt.is, tt.want)
			}
		}
		if _, err := s.Get(ctx, "x"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("a refused batch stored job x: %v", err)
		}
		// Spool files go one by one: the refused one is not stored, the
		// others are.
		rs, err := s.EnqueueEach(ctx, []claim.NewJob{job("p", "nope"), job("q", "a")})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(rs[0].Err, claim.ErrInvalid) || rs[1].Err != nil || rs[1].Job.Waiting != 1 {
			t.Errorf("EnqueueEach = %+v, want p refused (ErrInvalid), q stored waiting", rs)
		}
		if _, err := s.Get(ctx, "p"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("refused spool job p was stored: %v", err)
		}
	})
}

// TestDependencyDeathEndsTheChain: a → b → c. a dies: b and c die with it,
// each naming a, the root cause, and how it died. dlq retry of a re-arms both.
func TestDependencyDeathEndsTheChain(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		one := 1
		a := claim.NewJob{ID: "a", Command: "false", MaxRetries: &one}
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{a, job("b", "a"), job("c", "b"), job("other")}); err != nil {
			t.Fatal(err)
		}
		j, r := mustClaim(t, s, claimant(t, "w"))
		if j.ID != "a" {
			t.Fatalf("claimed %s first, want a", j.ID)
		}
		next, err := s.Fail(ctx, j, r, intp(1), "exit status 1", time.Hour)
		if err != nil || next != claim.Dead {
			t.Fatalf("Fail(a) = %s, %v; want dead", next, err)
		}
		ended, err := s.EndDependents(ctx, "a", claim.Dead)
		if err != nil {
			t.Fatal(err)
		}
		if len(ended) != 2 || ended[0].ID != "b" || ended[1].ID != "c" {
			t.Fatalf("EndDependents(a) = %v, want b and c", ids(ended))
		}
		// Each names the root cause, a, and how it died; c also the job it
		// waited for.
		for id, want := range map[string]string{"b": "dependency a ended dead: exit 1", "c": "dependency a ended dead: exit 1 (via b)"} {
			if j := mustGet(t, s, id); j.State != claim.Dead || j.LastError != want || j.DeadBy == "" {
				t.Errorf("%s = %s %q, want dead %q", id, j.State, j.LastError, want)
			}
		}
		// A dead job waits for nothing: it names what killed it, not what
		// it waited for.
		for id, want := range map[string]string{"b": "a", "c": "b"} {
			if j := mustGet(t, s, id); j.WaitingOn != nil || j.DeadBy != want {
				t.Errorf("%s: waiting on %v, dead by %q; want waiting on nothing, dead by %s", id, j.WaitingOn, j.DeadBy, want)
			}
		}
		if _, err := s.Retry(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"b", "c"} {
			if j := mustGet(t, s, id); j.State != claim.Pending || j.LastError != "" || j.Waiting != 1 {
				t.Errorf("after dlq retry of a, %s = %s %q waiting %d; want pending, waiting 1", id, j.State, j.LastError, j.Waiting)
			}
		}
		// Only a and other are runnable; b and c wait for a again, and run
		// once it completes.
		complete(t, s, "other")
		complete(t, s, "a")
		complete(t, s, "b")
		complete(t, s, "c")
	})
}

// A held job waits like a pending one: when what it waits for dies, it
// dies too, and so do the jobs that wait for it. Left held, it waited for
// ever, and released, it waited for a dead job.
func TestHeldDependentDiesWithItsDependency(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		one := 1
		a := claim.NewJob{ID: "a", Command: "false", MaxRetries: &one}
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{a, job("b", "a"), job("c", "b")}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Hold(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		j, r := mustClaim(t, s, claimant(t, "w"))
		if next, err := s.Fail(ctx, j, r, intp(1), "exit status 1", time.Hour); err != nil || next != claim.Dead {
			t.Fatalf("Fail(a) = %s, %v; want dead", next, err)
		}
		ended, err := s.EndDependents(ctx, "a", claim.Dead)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(ended); got != "b c" {
			t.Fatalf("EndDependents(a) = %v, want b c: the held b dies with a", got)
		}
		if j := mustGet(t, s, "b"); j.State != claim.Dead || j.LastError != "dependency a ended dead: exit 1" {
			t.Errorf("b = %s %q, want dead by a", j.State, j.LastError)
		}
		if _, err := s.ReleaseHeld(ctx, "b"); !errors.Is(err, claim.ErrConflict) {
			t.Errorf("ReleaseHeld(b) = %v, want ErrConflict: b is dead, not held", err)
		}
		// dlq retry of a re-arms both, as for a chain that was never held.
		if _, err := s.Retry(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"b", "c"} {
			if j := mustGet(t, s, id); j.State != claim.Pending || j.Waiting != 1 {
				t.Errorf("after dlq retry of a, %s = %s waiting %d; want pending, waiting 1", id, j.State, j.Waiting)
			}
		}
	})
}

func TestAfterADeadJobIsRefused(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		one := 1
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "false", MaxRetries: &one})
		j, r := mustClaim(t, s, claimant(t, "w"))
		if _, err := s.Fail(t.Context(), j, r, intp(1), "exit status 1", time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Enqueue(t.Context(), job("b", "a")); !errors.Is(err, claim.ErrConflict) || !strings.Contains(err.Error(), "job a is dead") ||
			!strings.Contains(err.Error(), "queuectl dlq retry a") {
			t.Errorf("Enqueue after a dead job = %v, want ErrConflict naming a and dlq retry", err)
		}
		// A canceled job is not in the dead-letter queue: restart runs it.
		mustEnqueue(t, s, claim.NewJob{ID: "c", Command: "true"})
		if _, _, _, err := s.Cancel(t.Context(), "c"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Enqueue(t.Context(), job("d", "c")); !errors.Is(err, claim.ErrConflict) || !strings.Contains(err.Error(), "job c is canceled") ||
			!strings.Contains(err.Error(), "queuectl restart c") {
			t.Errorf("Enqueue after a canceled job = %v, want ErrConflict naming c and restart", err)
		}
	})
}

func TestHooksLimitsAndRunNotesAreStored(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		hooks := claim.Hooks{OnSuccess: "notify-send ok", OnDead: `mail -s "$QUEUECTL_JOB_ID" me`}
		limits := claim.Limits{Memory: 512 << 20, CPU: time.Minute, NoFile: 64}
		mustEnqueue(t, s, claim.NewJob{ID: "h", Command: "true", Hooks: hooks, Limits: limits})
		j := mustGet(t, s, "h")
		if j.Hooks != hooks || j.Limits != limits {
			t.Errorf("stored hooks %+v limits %+v, want %+v %+v", j.Hooks, j.Limits, hooks, limits)
		}
		_, r := mustClaim(t, s, claimant(t, "w"))
		r.Confined = "rlimit"
		if err := s.Started(t.Context(), r, 4242); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Complete(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{"on_success ok", "on_dead failed: exit status 1"} {
			if err := s.HookDone(t.Context(), r, text); err != nil {
				t.Fatal(err)
			}
		}
		runs := mustRuns(t, s, "h")
		if runs[0].Confined != "rlimit" || runs[0].Hooks != "on_success ok\non_dead failed: exit status 1" {
			t.Errorf("run = confined %q hooks %q", runs[0].Confined, runs[0].Hooks)
		}
	})
}

// TestDependencyErrorNamesTheCause: the error of a job whose dependency
// ended says how: canceled, timed out, or a dependency of its own.
func TestDependencyErrorNamesTheCause(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		one := 1
		slow := claim.NewJob{ID: "slow", Command: "sleep 9", MaxRetries: &one}
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{job("gate"), job("x", "gate"), slow, job("y", "slow")}); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := s.Cancel(ctx, "gate"); err != nil {
			t.Fatal(err)
		}
		j, r := mustClaim(t, s, claimant(t, "w"))
		if j.ID != "slow" {
			t.Fatalf("claimed %s, want slow", j.ID)
		}
		if _, err := s.Fail(ctx, j, r, nil, "timed out after 5s", time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EndDependents(ctx, "slow", claim.Dead); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{"x": "dependency gate was canceled", "y": "dependency slow ended dead: timed out after 5s"} {
			if j := mustGet(t, s, id); j.State != claim.Dead || j.LastError != want {
				t.Errorf("%s = %s %q, want dead %q", id, j.State, j.LastError, want)
			}
		}
	})
}

// TestRetryLeavesDeadBelowAHeldKey: a → b → c and a → d → e, and b's
// unique_key is taken by x while b is dead. dlq retry of a cannot re-arm b
// (the key is x's), so b stays dead, and so does c: a job pending behind a
// dead one would wait for ever, shown as waiting, until a worker's
// start-up killed it again. d and e wait again. RetryChain says which is
// which, for the user to be told.
func TestRetryLeavesDeadBelowAHeldKey(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		one := 1
		a := claim.NewJob{ID: "a", Command: "false", MaxRetries: &one}
		b := job("b", "a")
		b.UniqueKey = "k"
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{a, b, job("c", "b"), job("d", "a"), job("e", "d")}); err != nil {
			t.Fatal(err)
		}
		j, run := mustClaim(t, s, claimant(t, "w"))
		if next, err := s.Fail(ctx, j, run, intp(1), "exit status 1", time.Hour); err != nil || next != claim.Dead {
			t.Fatalf("Fail(a) = %s, %v; want dead", next, err)
		}
		if _, err := s.EndDependents(ctx, "a", claim.Dead); err != nil {
			t.Fatal(err)
		}
		x := claim.NewJob{ID: "x", Command: "true", UniqueKey: "k", RunAt: time.Now().Add(time.Hour)}
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{x}); err != nil {
			t.Fatal(err)
		}
		_, r, err := s.RetryChain(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Waiting, []string{"d", "e"}) || !slices.Equal(r.Left, []string{"b"}) {
			t.Errorf("RetryChain(a) = waiting %v, left %v; want waiting [d e], left [b]", r.Waiting, r.Left)
		}
		// Their errors say why they are still dead, not that a, pending
		// again, died.
		for id, want := range map[string]string{
			"b": "unique_key k is held by job x",
			"c": "dependency b stays dead: unique_key k is held by job x",
		} {
			if j := mustGet(t, s, id); j.State != claim.Dead || j.LastError != want {
				t.Errorf("after dlq retry of a with b's key held, %s = %s %q; want dead %q", id, j.State, j.LastError, want)
			}
		}
		left, err := s.EndLeftDependents(ctx)
		if err != nil || len(left) != 0 {
			t.Errorf("EndLeftDependents = %v, %v; want none: no pending job waits for a dead one", ids(left), err)
		}
	})
}

// TestRetryAllSaysWhyItLeavesDead: as TestRetryLeavesDeadBelowAHeldKey,
// through dlq retry --all: b, left dead as x holds its key, and c below
// it say so, not that a, pending again, died.
func TestRetryAllSaysWhyItLeavesDead(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		one := 1
		a := claim.NewJob{ID: "a", Command: "false", MaxRetries: &one}
		b := job("b", "a")
		b.UniqueKey = "k"
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{a, b, job("c", "b")}); err != nil {
			t.Fatal(err)
		}
		j, run := mustClaim(t, s, claimant(t, "w"))
		if next, err := s.Fail(ctx, j, run, intp(1), "exit status 1", time.Hour); err != nil || next != claim.Dead {
			t.Fatalf("Fail(a) = %s, %v; want dead", next, err)
		}
		if _, err := s.EndDependents(ctx, "a", claim.Dead); err != nil {
			t.Fatal(err)
		}
		x := claim.NewJob{ID: "x", Command: "true", UniqueKey: "k", RunAt: time.Now().Add(time.Hour)}
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{x}); err != nil {
			t.Fatal(err)
		}
		retried, err := s.RetryAll(ctx)
		if err != nil || len(retried) != 1 || retried[0].ID != "a" {
			t.Fatalf("RetryAll = %v, %v; want a alone", ids(retried), err)
		}
		for id, want := range map[string]string{
			"b": "unique_key k is held by job x",
			"c": "dependency b stays dead: unique_key k is held by job x",
		} {
			if j := mustGet(t, s, id); j.State != claim.Dead || j.LastError != want {
				t.Errorf("after dlq retry --all with b's key held, %s = %s %q; want dead %q", id, j.State, j.LastError, want)
			}
		}
	})
}

// TestRestartChainNamesTheRearmed: restart of a canceled dependency says
// which jobs its cancel had made dead wait for it again.
func TestRestartChainNamesTheRearmed(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{job("a"), job("b", "a"), job("c", "b")}); err != nil {
			t.Fatal(err)
		}
		if _, died, _, err := s.Cancel(ctx, "a"); err != nil || len(died) != 2 {
			t.Fatalf("Cancel(a) = %v, %v; want b and c dead", ids(died), err)
		}
		_, r, err := s.RestartChain(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Waiting, []string{"b", "c"}) || len(r.Left) != 0 {
			t.Errorf("RestartChain(a) = waiting %v, left %v; want waiting [b c], none left", r.Waiting, r.Left)
		}
	})
}

// TestRestartOfACompletedDependencyIsWaitedFor: c waits for p and q; p
// completed, q has not. Restarting p makes c wait for p's new run, as it
// waited for the first: it must not run on q's completion alone while p
// runs again. A dependent that ran already is left as it is.
func TestRestartOfACompletedDependencyIsWaitedFor(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{job("p"), job("done", "p"), job("q"), job("c", "p", "q")}); err != nil {
			t.Fatal(err)
		}
		complete(t, s, "p")
		complete(t, s, "done")
		complete(t, s, "q")
		// c is runnable now; p restarts before a worker took it.
		_, r, err := s.RestartChain(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		if j := mustGet(t, s, "c"); j.Waiting != 1 || !slices.Equal(j.WaitingOn, []string{"p"}) {
			t.Errorf("after restart of p, c waits for %v (count %d); want [p]", j.WaitingOn, j.Waiting)
		}
		if !slices.Equal(r.Rewaiting, []string{"c"}) {
			t.Errorf("RestartChain(p) rewaiting = %v, want [c]", r.Rewaiting)
		}
		complete(t, s, "p")
		complete(t, s, "c")
		noClaim(t, s)
		if j := mustGet(t, s, "done"); j.State != claim.Completed {
			t.Errorf("done = %s, want completed: it ran already", j.State)
		}
	})
}

// TestAfterASkippedJobOfTheBatch: a nightly batch extract → transform, whose
// extract is skipped because last night's still holds its unique_key. The
// batch is refused, and the error says why transform has nothing to wait
// for, instead of "no job extract" of a job that is right there.
func TestAfterASkippedJobOfTheBatch(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		old := claim.NewJob{ID: "old", Command: "true", UniqueKey: "nightly", RunAt: time.Now().Add(time.Hour)}
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{old}); err != nil {
			t.Fatal(err)
		}
		extract := claim.NewJob{ID: "extract", Command: "true", UniqueKey: "nightly"}
		want := `after: job extract of this batch was skipped, as a live job holds its unique_key "nightly"`
		_, err := s.EnqueueAll(ctx, []claim.NewJob{job("transform", "extract"), extract})
		if !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("EnqueueAll = %v; want ErrInvalid saying %q", err, want)
		}
		batch := func(yield func(claim.NewJob, error) bool) {
			_ = yield(extract, nil) && yield(job("transform", "extract"), nil)
		}
		_, err = s.EnqueueStream(ctx, batch, func([]claim.Result) error { return nil })
		if !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("EnqueueStream = %v; want ErrInvalid saying %q", err, want)
		}
		if _, err := s.Get(ctx, "transform"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("Get(transform) = %v, want ErrNotFound: the batch is refused", err)
		}
	})
}

// TestEndLeftDependentsEndsEveryChain: a worker that crashed between two
// deaths and the ends of their dependents left b1 and b2 waiting for
// ever, and c below b1. The next worker's start ends them all at once,
// each saying which dependency died and how.
func TestEndLeftDependentsEndsEveryChain(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		one := 1
		a1 := claim.NewJob{ID: "a1", Command: "false", MaxRetries: &one}
		a2 := claim.NewJob{ID: "a2", Command: "false", MaxRetries: &one}
		if _, err := s.EnqueueAll(ctx, []claim.NewJob{a1, a2, job("b1", "a1"), job("b2", "a2"), job("c", "b1"), job("free")}); err != nil {
			t.Fatal(err)
		}
		for code := range 2 {
			j, run := mustClaim(t, s, claimant(t, "w"))
			if next, err := s.Fail(ctx, j, run, intp(code+2), fmt.Sprintf("exit status %d", code+2), time.Hour); err != nil || next != claim.Dead {
				t.Fatalf("Fail(%s) = %s, %v; want dead", j.ID, next, err)
			}
		}
		ended, err := s.EndLeftDependents(ctx)
		slices.SortFunc(ended, func(a, b claim.Job) int { return strings.Compare(a.ID, b.ID) })
		if err != nil || ids(ended) != "b1 b2 c" {
			t.Fatalf("EndLeftDependents = %v, %v; want b1 b2 c", ids(ended), err)
		}
		for id, want := range map[string]string{
			"b1": "dependency a1 ended dead: exit 2",
			"b2": "dependency a2 ended dead: exit 3",
			"c":  "dependency a1 ended dead: exit 2 (via b1)",
		} {
			if j := mustGet(t, s, id); j.State != claim.Dead || j.LastError != want {
				t.Errorf("%s = %s %q; want dead %q", id, j.State, j.LastError, want)
			}
		}
		if j := mustGet(t, s, "free"); j.State != claim.Pending {
			t.Errorf("free = %s; want pending: it waits for nothing", j.State)
		}
		if again, err := s.EndLeftDependents(ctx); err != nil || len(again) != 0 {
			t.Errorf("EndLeftDependents again = %v, %v; want none", ids(again), err)
		}
	})
}

// TestGetNamesWhatAJobRanAfter: a job keeps naming the jobs it runs after
// (Job.After) once they completed and it ran, when WaitingOn is empty.
func TestGetNamesWhatAJobRanAfter(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		mustEnqueue(t, s, job("a"))
		mustEnqueue(t, s, job("b"))
		mustEnqueue(t, s, job("c", "b", "a"))
		if c := mustGet(t, s, "c"); !slices.Equal(c.After, []string{"a", "b"}) {
			t.Errorf("waiting c: After = %v, want [a b]", c.After)
		}
		complete(t, s, "a")
		complete(t, s, "b")
		complete(t, s, "c")
		if c := mustGet(t, s, "c"); c.State != claim.Completed || c.WaitingOn != nil || !slices.Equal(c.After, []string{"a", "b"}) {
			t.Errorf("c = %s waiting on %v, After %v; want completed waiting on nothing, After [a b]", c.State, c.WaitingOn, c.After)
		}
		if a := mustGet(t, s, "a"); a.After != nil {
			t.Errorf("a: After = %v, want none", a.After)
		}
	})
}

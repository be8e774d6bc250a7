package claim_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func mustPaused(tb testing.TB, s *claim.Store) []string {
	tb.Helper()
	p, err := s.Paused(tb.Context())
	if err != nil {
		tb.Fatalf("Paused = %v", err)
	}
	return p
}

func TestPauseQueue(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		mustEnqueue(t, s, claim.NewJob{ID: "a1", Command: "true", Queue: "a", Priority: 9})
		mustEnqueue(t, s, claim.NewJob{ID: "a2", Command: "true", Queue: "a", Priority: 9})
		mustEnqueue(t, s, claim.NewJob{ID: "b1", Command: "true", Queue: "b"})
		running, r := mustClaim(t, s, claimant(t, "w")) // a1, the highest priority
		if err := s.Pause(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		// Another store (another process) sees the pause at once: it is in the
		// claim statement.
		other := db.open(t)
		if got := mustPaused(t, other); !slices.Equal(got, []string{"a"}) {
			t.Errorf("Paused = %v, want [a]", got)
		}
		if got := fmt.Sprint(claimOrder(t, other, claimant(t, "w2"))); got != "[b1]" {
			t.Errorf("claims while a is paused = %s, want [b1]", got)
		}
		onlyA := claimant(t, "wa")
		onlyA.Queues = []string{"a"}
		if more, err := other.HasWork(ctx, onlyA.Queues); more || err != nil {
			t.Errorf("HasWork([a]) while paused = %v, %v; want false: a draining worker may stop", more, err)
		}
		// The running job goes on and completes.
		if n, err := s.Running(ctx, "a"); n != 1 || err != nil {
			t.Errorf("Running(a) = %d, %v; want 1", n, err)
		}
		if _, err := s.Complete(ctx, r); err != nil || mustGet(t, s, running.ID).State != claim.Completed {
			t.Errorf("Complete of a running job in a paused queue = %v", err)
		}
		if n, _ := s.Running(ctx, "a"); n != 0 {
			t.Errorf("Running(a) after it completed = %d, want 0", n)
		}
		// Pausing twice is no error; resuming twice neither.
		if err := s.Pause(ctx, "a"); err != nil {
			t.Errorf("second Pause = %v", err)
		}
		for range 2 {
			if err := other.Resume(ctx, "a"); err != nil {
				t.Errorf("Resume(a) = %v", err)
			}
		}
		if got := fmt.Sprint(claimOrder(t, s, onlyA)); got != "[a2]" {
			t.Errorf("claims after resume = %s, want [a2]", got)
		}
	})
}

func TestPauseAll(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		mustEnqueue(t, s, claim.NewJob{ID: "a1", Command: "true", Queue: "a"})
		mustEnqueue(t, s, claim.NewJob{ID: "d1", Command: "true"})
		for _, q := range []string{"a", claim.AllQueues} {
			if err := s.Pause(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if got := mustPaused(t, s); !slices.Equal(got, []string{"*", "a"}) {
			t.Errorf("Paused = %v, want [* a]", got)
		}
		if j, _, err := s.Claim(ctx, claimant(t, "w")); !errors.Is(err, claim.ErrNoJob) {
			t.Errorf("Claim with every queue paused = %s, %v; want ErrNoJob", j.ID, err)
		}
		if next, err := s.NextRunAfter(ctx, nil); !next.IsZero() || err != nil {
			t.Errorf("NextRunAfter = %v, %v; want nothing to wait for", next, err)
		}
		if err := s.Resume(ctx, "default"); !errors.Is(err, claim.ErrConflict) {
			t.Errorf("Resume(default) while all are paused = %v, want ErrConflict", err)
		}
		if err := s.Resume(ctx, claim.AllQueues); err != nil {
			t.Fatal(err)
		}
		if got := mustPaused(t, s); len(got) != 0 {
			t.Errorf("Paused after resuming all = %v, want none", got)
		}
		if got := fmt.Sprint(claimOrder(t, s, claimant(t, "w"))); got != "[a1 d1]" {
			t.Errorf("claims after resume = %s, want [a1 d1]", got)
		}
		for _, q := range []string{"", "a b", "../x"} {
			if err := s.Pause(ctx, q); !errors.Is(err, claim.ErrInvalid) {
				t.Errorf("Pause(%q) = %v, want ErrInvalid", q, err)
			}
		}
	})
}

func TestPausedOf(t *testing.T) {
	for _, tc := range []struct {
		paused, queues, want []string
	}{
		{nil, nil, nil},
		{[]string{"a"}, nil, []string{"a"}},
		{[]string{"*"}, nil, []string{"*"}},
		{[]string{"*"}, []string{"x", "y"}, []string{"*"}},
		{[]string{"*", "a"}, nil, []string{"*"}},
		{[]string{"a", "c"}, []string{"a", "b"}, []string{"a"}},
		{[]string{"c"}, []string{"a", "b"}, nil},
	} {
		if got := claim.PausedOf(tc.paused, tc.queues); !slices.Equal(got, tc.want) {
			t.Errorf("PausedOf(%v, %v) = %v, want %v", tc.paused, tc.queues, got, tc.want)
		}
	}
}

// TestRetryDueHeldBack: a failed job whose retry is due but whose queue is
// paused, or at its limit, is told so (Job.HeldBack), so that list does not
// say its retry is simply due; one whose retry is still ahead is not.
func TestRetryDueHeldBack(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		c := claim.Claimant{WorkerID: "w", Host: "h", PID: 1, Lease: time.Hour, LogDir: t.TempDir()}
		fail := func(id, queue string) {
			t.Helper()
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "false", Queue: queue})
			j, r := mustClaim(t, s, c)
			if j.ID != id {
				t.Fatalf("claimed %s, want %s", j.ID, id)
			}
			if _, err := s.Fail(ctx, j, r, intp(1), "exit status 1", time.Second); err != nil {
				t.Fatal(err)
			}
		}
		fail("m", "mail")
		fail("b", "busy")
		fail("soon", "other")
		mustEnqueue(t, s, claim.NewJob{ID: "run", Command: "true", Queue: "busy"})
		if j, _ := mustClaim(t, s, c); j.ID != "run" {
			t.Fatalf("claimed %s, want run", j.ID)
		}
		if err := s.Pause(ctx, "mail"); err != nil {
			t.Fatal(err)
		}
		if err := s.SetQueueLimit(ctx, "busy", 1); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"m": "", "b": "", "soon": "", "run": ""}
		check := func(when string) {
			t.Helper()
			jobs, err := s.List(ctx, claim.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range jobs {
				if j.HeldBack != want[j.ID] || j.PendingReason != "" {
					t.Errorf("%s: List: %s held back %q (reason %q), want %q", when, j.ID, j.HeldBack, j.PendingReason, want[j.ID])
				}
				if g := mustGet(t, s, j.ID); g.HeldBack != want[j.ID] {
					t.Errorf("%s: Get(%s) held back %q, want %q", when, j.ID, g.HeldBack, want[j.ID])
				}
			}
		}
		check("retries ahead")
		clk.Advance(2 * time.Second)
		want["m"], want["b"] = claim.ReasonPaused, claim.ReasonLimited
		check("retries due")
	})
}

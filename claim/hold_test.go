package claim_test

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func TestHoldAndRelease(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true", Priority: 5, UniqueKey: "k"})
		mustEnqueue(t, s, claim.NewJob{ID: "b", Command: "true"})
		mustEnqueue(t, s, claim.NewJob{ID: "flaky", Command: "false", Priority: 9})
		j, r := mustClaim(t, s, claimant(t, "w"))
		if _, err := s.Fail(ctx, j, r, intp(1), "exit status 1", time.Second); err != nil {
			t.Fatal(err)
		}
		for i, id := range []string{"a", "flaky", "a"} { // again: no error, and no change
			j, changed, err := s.Hold(ctx, id)
			if err != nil || j.State != claim.Held || changed != (i < 2) {
				t.Fatalf("Hold(%s) = %s, changed %v, %v; want held, changed %v", id, j.State, changed, err, i < 2)
			}
		}
		clk.Advance(time.Hour)
		if j, _ := mustClaim(t, s, claimant(t, "w")); j.ID != "b" {
			t.Errorf("Claim = %s, want b: held jobs are skipped", j.ID)
		}
		if _, _, err := s.Claim(ctx, claimant(t, "w")); !errors.Is(err, claim.ErrNoJob) {
			t.Errorf("Claim = %v, want ErrNoJob", err)
		}
		if _, err := s.Enqueue(ctx, claim.NewJob{ID: "a2", Command: "true", UniqueKey: "k"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "a2"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("a2 was enqueued while held a has its unique_key")
		}
		counts, _ := s.Counts(ctx)
		if counts[claim.Held] != 2 {
			t.Errorf("Counts = %v, want 2 held", counts)
		}
		if _, _, err := s.Hold(ctx, "b"); !errors.Is(err, claim.ErrConflict) {
			t.Errorf("Hold(processing b) = %v, want ErrConflict", err)
		}
		if _, err := s.ReleaseHeld(ctx, "b"); !errors.Is(err, claim.ErrConflict) {
			t.Errorf("ReleaseHeld(b) = %v, want ErrConflict", err)
		}
		if _, _, err := s.Hold(ctx, "nosuch"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("Hold(nosuch) = %v, want ErrNotFound", err)
		}
		held, err := s.List(ctx, claim.Filter{State: claim.Held})
		if err != nil || len(held) != 2 {
			t.Errorf("List(held) = %d jobs, %v; want 2", len(held), err)
		}
		for id, want := range map[string]claim.State{"a": claim.Pending, "flaky": claim.Failed} {
			j, err := s.ReleaseHeld(ctx, id)
			if err != nil || j.State != want {
				t.Errorf("ReleaseHeld(%s) = %s, %v; want %s", id, j.State, err, want)
			}
		}
		if j := mustGet(t, s, "flaky"); j.Attempts != 1 {
			t.Errorf("released flaky has %d attempts, want 1 kept", j.Attempts)
		}
		if j, _ := mustClaim(t, s, claimant(t, "w")); j.ID != "flaky" {
			t.Errorf("Claim after release = %s, want flaky (priority 9)", j.ID)
		}
		// A held job can be canceled.
		mustEnqueue(t, s, claim.NewJob{ID: "c", Command: "true"})
		if _, _, err := s.Hold(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if j := mustCancel(t, s, "c"); j.State != claim.Canceled {
			t.Errorf("Cancel(held) = %s, want canceled", j.State)
		}
	})
}

func TestEditUnstartedJob(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "e", Command: "echo a", Env: map[string]string{"A": "1"}})
		clk.Advance(time.Second)
		cmd, prio, queue, retries, label := "echo b", 7, "other", 9, "nightly"
		at := t0.Add(time.Hour)
		j, err := s.Edit(ctx, "e", claim.Edit{Command: &cmd, Priority: &prio, Queue: &queue, MaxRetries: &retries,
			Label: &label, RunAt: &at, Env: map[string]string{"B": "2"}})
		if err != nil {
			t.Fatalf("Edit = %v", err)
		}
		j = mustGet(t, s, "e")
		if j.Command != cmd || j.Priority != prio || j.Queue != queue || j.MaxRetries != retries || j.Label != label ||
			!j.RunAfter.Equal(at) || !maps.Equal(j.Env, map[string]string{"A": "1", "B": "2"}) || j.PendingReason != claim.ReasonScheduled {
			t.Errorf("edited job = %+v", j)
		}
		counts, _ := s.QueueCounts(ctx)
		if counts["other"][claim.Pending] != 1 || counts["default"][claim.Pending] != 0 {
			t.Errorf("QueueCounts = %v, want the job counted in its new queue", counts)
		}
		if labelled, err := s.List(ctx, claim.Filter{Label: "nightly"}); err != nil || len(labelled) != 1 {
			t.Errorf("List(label nightly) = %v, %v; want e", labelled, err)
		}
		bad := ""
		if _, err := s.Edit(ctx, "e", claim.Edit{Command: &bad}); !errors.Is(err, claim.ErrInvalid) {
			t.Errorf("Edit(empty command) = %v, want ErrInvalid", err)
		}
		clk.Advance(2 * time.Hour)
		mustClaim(t, s, claim.Claimant{WorkerID: "w", Host: "h", PID: 1, Lease: time.Minute, LogDir: t.TempDir(), Queues: []string{"other"}})
		if _, err := s.Edit(ctx, "e", claim.Edit{Command: &cmd}); !errors.Is(err, claim.ErrConflict) {
			t.Errorf("Edit(processing) = %v, want ErrConflict", err)
		}
	})
}

// TestEditRefusesAJobHeldAfterItRan: a failed job, held, is no unstarted
// job: its command ran and its attempts count. Edited, it could have run
// again past a max_retries set below the attempts it had spent ("2/1").
// A job put back from the dead letters has its attempts anew, and may be.
func TestEditRefusesAJobHeldAfterItRan(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		two, one := 2, 1
		mustEnqueue(t, s, claim.NewJob{ID: "f", Command: "exit 1", MaxRetries: &two})
		c := claim.Claimant{WorkerID: "w", Host: "h", PID: 1, Lease: time.Minute, LogDir: t.TempDir()}
		j, r := mustClaim(t, s, c)
		code := 1
		if _, err := s.Fail(ctx, j, r, &code, "exit status 1", time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Hold(ctx, "f"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Edit(ctx, "f", claim.Edit{MaxRetries: &one}); !errors.Is(err, claim.ErrConflict) || !strings.Contains(err.Error(), "held after 1 attempt") {
			t.Errorf("Edit(held after a failed attempt) = %v, want ErrConflict saying it ran", err)
		}
		if j := mustGet(t, s, "f"); j.MaxRetries != 2 {
			t.Errorf("max_retries = %d after the refused edit, want 2", j.MaxRetries)
		}

		mustEnqueue(t, s, claim.NewJob{ID: "d", Command: "exit 1", MaxRetries: &one})
		j, r = mustClaim(t, s, c)
		if _, err := s.Fail(ctx, j, r, &code, "exit status 1", time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Retry(ctx, "d"); err != nil {
			t.Fatal(err)
		}
		cmd := "exit 0"
		if _, err := s.Edit(ctx, "d", claim.Edit{Command: &cmd}); err != nil {
			t.Errorf("Edit(retried from the dead letters) = %v, want it edited", err)
		}
	})
}

// everyReason enqueues a pending job of each reason in s, and one that
// has none: later (scheduled), after (waiting on dep, which runs in queue
// busy), mail (its queue paused), busy2 (queue busy at its limit of 1),
// and ready.
func everyReason(t *testing.T, s *claim.Store) {
	t.Helper()
	ctx := t.Context()
	mustEnqueue(t, s, claim.NewJob{ID: "later", Command: "true", Delay: time.Hour})
	mustEnqueue(t, s, claim.NewJob{ID: "dep", Command: "true", Queue: "busy"})
	mustEnqueue(t, s, claim.NewJob{ID: "after", Command: "true", After: []string{"dep"}})
	mustEnqueue(t, s, claim.NewJob{ID: "mail", Command: "true", Queue: "mail"})
	mustEnqueue(t, s, claim.NewJob{ID: "busy2", Command: "true", Queue: "busy"})
	mustEnqueue(t, s, claim.NewJob{ID: "ready", Command: "true"})
	if err := s.Pause(ctx, "mail"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetQueueLimit(ctx, "busy", 1); err != nil {
		t.Fatal(err)
	}
	if j, _ := mustClaim(t, s, claim.Claimant{WorkerID: "w", Host: "h", PID: 1, Lease: time.Minute,
		LogDir: t.TempDir(), Queues: []string{"busy"}}); j.ID != "dep" {
		t.Fatalf("claimed %s, want dep", j.ID)
	}
}

func TestPendingReasons(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		everyReason(t, s)
		want := map[string]string{"later": claim.ReasonScheduled, "after": claim.ReasonWaiting, "mail": claim.ReasonPaused,
			"busy2": claim.ReasonLimited, "ready": "", "dep": ""}
		jobs, err := s.List(ctx, claim.Filter{})
		if err != nil || len(jobs) != len(want) {
			t.Fatalf("List = %d jobs, %v", len(jobs), err)
		}
		for _, j := range jobs {
			if j.PendingReason != want[j.ID] {
				t.Errorf("List: %s's reason = %q, want %q", j.ID, j.PendingReason, want[j.ID])
			}
			if g := mustGet(t, s, j.ID); g.PendingReason != want[j.ID] {
				t.Errorf("Get(%s) reason = %q, want %q", j.ID, g.PendingReason, want[j.ID])
			}
		}
		counts, err := s.PendingCounts(ctx)
		wantCounts := map[string]int{claim.ReasonScheduled: 1, claim.ReasonWaiting: 1, claim.ReasonPaused: 1, claim.ReasonLimited: 1}
		if err != nil || !maps.Equal(counts, wantCounts) {
			t.Errorf("PendingCounts = %v, %v; want %v", counts, err, wantCounts)
		}

		// A job both scheduled and waiting counts once, as scheduled; a
		// held one not at all; once its time has come, a job is runnable.
		mustEnqueue(t, s, claim.NewJob{ID: "later-after", Command: "true", Delay: 30 * time.Minute, After: []string{"dep"}})
		mustEnqueue(t, s, claim.NewJob{ID: "kept", Command: "true", Delay: time.Hour})
		if _, _, err := s.Hold(ctx, "kept"); err != nil {
			t.Fatal(err)
		}
		wantCounts[claim.ReasonScheduled] = 2
		if counts, err := s.PendingCounts(ctx); err != nil || !maps.Equal(counts, wantCounts) {
			t.Errorf("PendingCounts with later-after and kept = %v, %v; want %v", counts, err, wantCounts)
		}
		clk.Advance(45 * time.Minute)
		wantCounts[claim.ReasonScheduled], wantCounts[claim.ReasonWaiting] = 1, 2
		if counts, err := s.PendingCounts(ctx); err != nil || !maps.Equal(counts, wantCounts) {
			t.Errorf("PendingCounts 45 minutes on = %v, %v; want %v", counts, err, wantCounts)
		}
	})
}

// TestJobsByReason: a listing by reason keeps the pending jobs of that
// reason ("runnable": of none), in the listing's order, its limit counted
// after the reason; a reason that is none, or one with a state other than
// pending, is refused.
func TestJobsByReason(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		everyReason(t, s)
		mustEnqueue(t, s, claim.NewJob{ID: "ready2", Command: "true"})
		mustEnqueue(t, s, claim.NewJob{ID: "later2", Command: "true", Delay: time.Hour})
		for _, c := range []struct {
			f    claim.Filter
			want string
		}{
			{claim.Filter{Reason: claim.ReasonScheduled}, "later later2"},
			{claim.Filter{Reason: claim.ReasonScheduled, Newest: true}, "later2 later"},
			{claim.Filter{Reason: claim.ReasonScheduled, Limit: 1}, "later"},
			{claim.Filter{Reason: claim.ReasonWaiting, State: claim.Pending}, "after"},
			{claim.Filter{Reason: claim.ReasonPaused}, "mail"},
			{claim.Filter{Reason: claim.ReasonLimited}, "busy2"},
			{claim.Filter{Reason: claim.ReasonRunnable}, "ready ready2"},
			{claim.Filter{Reason: claim.ReasonRunnable, Queue: "busy"}, ""},
			{claim.Filter{Reason: claim.ReasonRunnable, Limit: 1, Newest: true}, "ready2"},
		} {
			jobs, err := s.List(ctx, c.f)
			var ids []string
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			if got := strings.Join(ids, " "); err != nil || got != c.want {
				t.Errorf("List(%+v) = %q, %v; want %q", c.f, got, err, c.want)
			}
		}
		for _, f := range []claim.Filter{{Reason: "stuck"}, {Reason: claim.ReasonPaused, State: claim.Failed}} {
			if _, err := s.List(ctx, f); !errors.Is(err, claim.ErrInvalid) {
				t.Errorf("List(%+v) = %v, want ErrInvalid", f, err)
			}
		}
	})
}

package claim_test

import (
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// countJobs counts jobs per state and per queue and state the slow way, by
// listing every job, for comparing with Counts and QueueCounts.
func countJobs(tb testing.TB, s *claim.Store) (map[claim.State]int, map[string]map[claim.State]int) {
	tb.Helper()
	states := map[claim.State]int{}
	for _, st := range claim.States {
		states[st] = 0
	}
	queues := map[string]map[claim.State]int{}
	jobs, err := s.List(tb.Context(), claim.Filter{})
	if err != nil {
		tb.Fatal(err)
	}
	for _, j := range jobs {
		states[j.State]++
		if queues[j.Queue] == nil {
			queues[j.Queue] = map[claim.State]int{}
		}
		queues[j.Queue][j.State]++
	}
	return states, queues
}

func checkCounts(tb testing.TB, s *claim.Store, step string) {
	tb.Helper()
	wantStates, wantQueues := countJobs(tb, s)
	got, err := s.Counts(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	if !maps.Equal(got, wantStates) {
		tb.Errorf("after %s: Counts = %v, want %v", step, got, wantStates)
	}
	byQueue, err := s.QueueCounts(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	if !reflect.DeepEqual(byQueue, wantQueues) {
		tb.Errorf("after %s: QueueCounts = %v, want %v", step, byQueue, wantQueues)
	}
}

// TestCountsFollowEveryChange: the counts an engine keeps agree with the
// jobs after every kind of state change.
func TestCountsFollowEveryChange(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		c := claimant(t, "w")
		checkCounts(t, s, "open")
		for i := range 6 {
			queue := []string{"", "builds"}[i%2] // two queues, counted apart
			mustEnqueue(t, s, claim.NewJob{ID: fmt.Sprintf("j%d", i), Command: "true", MaxRetries: intp(2), Queue: queue})
		}
		checkCounts(t, s, "enqueue")
		_, r := mustClaim(t, s, c)
		checkCounts(t, s, "claim")
		if _, err := s.Complete(ctx, r); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "complete")
		j, r := mustClaim(t, s, c)
		if _, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "fail")
		_, r = mustClaim(t, s, c)
		if err := s.Release(ctx, r, "stopped"); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "release")
		mustClaim(t, s, c) // lost below
		inflight, err := s.InFlight(ctx)
		if err != nil || len(inflight) != 1 {
			t.Fatalf("InFlight = %v, %v", inflight, err)
		}
		if _, err := s.Recover(ctx, inflight[0]); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "recover")
		dead := mustKill(t, s, "doomed")
		checkCounts(t, s, "dead")
		if _, err := s.Retry(ctx, dead.ID); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "retry")
		mustKill(t, s, "doomed-again")
		if err := s.Purge(ctx, "doomed-again"); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "purge")
		clk.Advance(time.Hour)
		if _, err := s.PurgeFinished(ctx, claim.Completed, clk.Now()); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "purge finished")
		held := mustEnqueue(t, s, claim.NewJob{ID: "held", Command: "true", Queue: "builds"})
		if _, _, err := s.Hold(ctx, held.ID); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "hold")
		moved := "other"
		if _, err := s.Edit(ctx, held.ID, claim.Edit{Queue: &moved}); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "edit queue")
		if _, err := s.ReleaseHeld(ctx, held.ID); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "release held")
		w2 := claimant(t, "w2")
		w2.Queues = []string{"builds"}
		mustClaim(t, s, w2) // builds: one processing, one pending
		if _, _, err := s.CancelQueue(ctx, "builds"); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "cancel queue")
	})
}

// TestEnqueueResultIsStored: the job Enqueue returns is the job Get reads
// back, field for field.
func TestEnqueueResultIsStored(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, _ := db.openClocked(t)
		timeout := 90 * time.Second
		for _, nj := range []claim.NewJob{
			{Command: "true"},
			{ID: "full", Command: "make", MaxRetries: intp(5), BackoffBase: intp(3), Priority: 7,
				Queue: "builds", Timeout: &timeout, Env: map[string]string{"A": "1"}, Cwd: t.TempDir(),
				UniqueKey: "nightly", IngestKey: "spool:0123"},
			{ID: "later", Command: "true", RunAt: t0.Add(time.Hour)},
			{ID: "delayed", Command: "true", Delay: time.Minute},
		} {
			j := mustEnqueue(t, s, nj)
			if got := mustGet(t, s, j.ID); !reflect.DeepEqual(j, got) {
				t.Errorf("Enqueue(%+v) returned\n%+v\nGet reads\n%+v", nj, j, got)
			}
		}
	})
}

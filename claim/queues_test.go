package claim_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func mustSetLimit(tb testing.TB, s *claim.Store, queue string, n int) {
	tb.Helper()
	if err := s.SetQueueLimit(context.Background(), queue, n); err != nil {
		tb.Fatalf("SetQueueLimit(%s, %d) = %v", queue, n, err)
	}
}

// claimIDs claims until nothing is runnable and returns the ids, in order.
func claimIDs(tb testing.TB, s *claim.Store, c claim.Claimant) ([]string, []claim.Run) {
	tb.Helper()
	var ids []string
	var runs []claim.Run
	for {
		j, r, err := s.Claim(context.Background(), c)
		if errors.Is(err, claim.ErrNoJob) {
			return ids, runs
		}
		if err != nil {
			tb.Fatalf("Claim = %v", err)
		}
		ids = append(ids, j.ID)
		runs = append(runs, r)
	}
}

// TestQueueLimit: a limited queue runs at most its limit at once; the other
// queues go on; every way a run ends frees its slot.
func TestQueueLimit(t *testing.T) {
	forEachEngine(t, testQueueLimit)
}

func testQueueLimit(t *testing.T, db testDB) {
	ctx := t.Context()
	s, clk := db.openClocked(t)
	mustSetLimit(t, s, "heavy", 2)
	for i := range 5 {
		mustEnqueue(t, s, claim.NewJob{ID: fmt.Sprintf("heavy%d", i), Queue: "heavy", Command: "true", Priority: 1})
	}
	mustEnqueue(t, s, claim.NewJob{ID: "light", Command: "true"})
	c := claimant(t, "w")
	ids, runs := claimIDs(t, s, c)
	if fmt.Sprint(ids) != "[heavy0 heavy1 light]" {
		t.Fatalf("claims with heavy limited to 2 = %v, want [heavy0 heavy1 light]", ids)
	}

	// Completed: a slot frees.
	if _, err := s.Complete(ctx, runs[0]); err != nil {
		t.Fatal(err)
	}
	j2, r2 := mustClaim(t, s, c)
	if j2.ID != "heavy2" {
		t.Fatalf("claim after a heavy job completed = %s, want heavy2", j2.ID)
	}
	if ids, _ := claimIDs(t, s, c); len(ids) != 0 {
		t.Fatalf("claims with heavy full again = %v, want none", ids)
	}
	// Full, the queue still has work: a draining worker waits for it.
	if more, err := s.HasWork(ctx, []string{"heavy"}); err != nil || !more {
		t.Fatalf("HasWork([heavy]) with heavy full = %v, %v; want true", more, err)
	}

	// Failed: a slot frees (the failed job waits for its backoff).
	if _, err := s.Fail(ctx, j2, r2, intp(1), "exit status 1", time.Hour); err != nil {
		t.Fatal(err)
	}
	j3, _ := mustClaim(t, s, c)
	if j3.ID != "heavy3" {
		t.Fatalf("claim after a heavy job failed = %s, want heavy3", j3.ID)
	}

	// Lost with its worker: the slot frees when the run is recovered.
	clk.Advance(31 * time.Second)
	fs, err := s.InFlight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Run.JobID == "heavy1" {
			if _, err := s.Recover(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ids, _ := claimIDs(t, s, c); len(ids) != 1 {
		t.Fatalf("claims after a lost heavy run was recovered = %v, want 1", ids)
	}
}

// TestQueueLimitChanges: a limit applies from its commit on, in every
// Store; 0 and RemoveQueue lift it; a lowered one stops nothing running.
func TestQueueLimitChanges(t *testing.T) {
	forEachEngine(t, testQueueLimitChanges)
}

func testQueueLimitChanges(t *testing.T, db testDB) {
	ctx := t.Context()
	admin, worker := db.open(t), db.open(t)
	for i := range 6 {
		mustEnqueue(t, admin, claim.NewJob{ID: fmt.Sprintf("j%d", i), Queue: "q", Command: "true"})
	}
	c := claimant(t, "w")
	mustSetLimit(t, admin, "q", 1)
	if ids, _ := claimIDs(t, worker, c); len(ids) != 1 {
		t.Fatalf("claims at limit 1 = %v, want 1", ids)
	}
	mustSetLimit(t, admin, "q", 3)
	if ids, _ := claimIDs(t, worker, c); len(ids) != 2 {
		t.Fatalf("claims after raising the limit to 3 = %v, want 2 more", ids)
	}
	mustSetLimit(t, admin, "q", 1) // 3 run on; none more
	if ids, _ := claimIDs(t, worker, c); len(ids) != 0 {
		t.Fatalf("claims after lowering the limit to 1 = %v, want none", ids)
	}
	qs, err := admin.Queues(ctx)
	if err != nil || len(qs) != 1 || qs[0].Name != "q" || qs[0].MaxRunning != 1 || qs[0].Running != 3 {
		t.Fatalf("Queues = %+v, %v; want q with limit 1 and 3 running", qs, err)
	}
	mustSetLimit(t, admin, "q", 0)
	if ids, _ := claimIDs(t, worker, c); len(ids) != 3 {
		t.Fatalf("claims at limit 0 (none) = %v, want the other 3", ids)
	}

	if err := admin.RemoveQueue(ctx, "q"); err != nil {
		t.Fatalf("RemoveQueue = %v", err)
	}
	if err := admin.RemoveQueue(ctx, "q"); !errors.Is(err, claim.ErrNotFound) {
		t.Errorf("RemoveQueue of a queue without settings = %v, want ErrNotFound", err)
	}
	if qs, err := admin.Queues(ctx); err != nil || len(qs) != 0 {
		t.Errorf("Queues after RemoveQueue = %+v, %v; want none", qs, err)
	}
	for _, bad := range []struct {
		queue string
		n     int
	}{{"q", -1}, {"", 1}, {"a b", 1}, {"*", 1}} {
		if err := admin.SetQueueLimit(ctx, bad.queue, bad.n); !errors.Is(err, claim.ErrInvalid) {
			t.Errorf("SetQueueLimit(%q, %d) = %v, want ErrInvalid", bad.queue, bad.n, err)
		}
	}
}

// TestQueueLimitConcurrentClaims: many claimants over several Stores race
// for a queue limited to 3; counted from outside the store (after a claim
// commits, before its completion does), never more than 3 run at once, and
// every job runs once. The unlimited queue beside it is drained too.
func TestQueueLimitConcurrentClaims(t *testing.T) {
	forEachEngine(t, testQueueLimitConcurrentClaims)
}

func testQueueLimitConcurrentClaims(t *testing.T, db testDB) {
	const limit, heavy, light = 3, 100, 200
	ctx := t.Context()
	admin := db.open(t)
	mustSetLimit(t, admin, "heavy", limit)
	batch := make([]claim.NewJob, 0, heavy+light)
	for i := range heavy {
		batch = append(batch, claim.NewJob{ID: fmt.Sprintf("h%04d", i), Queue: "heavy", Command: "true"})
	}
	for i := range light {
		batch = append(batch, claim.NewJob{ID: fmt.Sprintf("l%04d", i), Command: "true"})
	}
	if _, err := admin.EnqueueAll(ctx, batch); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	running, most := 0, 0
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i := range 3 {
		s := db.open(t)
		for g := range 4 {
			c := claimant(t, fmt.Sprintf("store%d-slot%d", i, g))
			wg.Go(func() {
				for {
					j, r, err := s.Claim(ctx, c)
					if errors.Is(err, claim.ErrNoJob) {
						if more, err := s.HasWork(ctx, nil); err != nil || !more {
							return
						}
						time.Sleep(2 * time.Millisecond) // a full queue: let a slot free
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					seen[j.ID]++
					if j.Queue == "heavy" {
						running++
						most = max(most, running)
					}
					mu.Unlock()
					time.Sleep(time.Millisecond) // the job runs
					if j.Queue == "heavy" {
						mu.Lock()
						running--
						mu.Unlock()
					}
					if _, err := s.Complete(ctx, r); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if most > limit {
		t.Errorf("%d heavy jobs ran at once, limit %d", most, limit)
	}
	if len(seen) != heavy+light {
		t.Errorf("%d jobs ran, want %d", len(seen), heavy+light)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("job %s ran %d times", id, n)
		}
	}
	t.Logf("at most %d heavy jobs ran at once (limit %d)", most, limit)
}

package postgres

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// TestGroupClaim: claims of one claimant that gather while transactions
// are in flight are one statement in the next, which honours the queue's
// limit, pauses, dependencies and priorities as a single claim does. The
// transactions in flight are held in the server by the claim lock, taken
// outside, so the third group is certain to form.
func TestGroupClaim(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	s, err := claim.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	jobs := []claim.NewJob{{ID: "free", Command: "true", Priority: 1},
		{ID: "blocked", Command: "true", Priority: 9, After: []string{"q-0"}}}
	for i := range 6 {
		jobs = append(jobs, claim.NewJob{ID: fmt.Sprintf("q-%d", i), Command: "true", Queue: "q", Priority: i})
	}
	for i := range 3 {
		jobs = append(jobs, claim.NewJob{ID: fmt.Sprintf("p-%d", i), Command: "true", Queue: "p", Priority: 9})
	}
	if _, err := s.EnqueueAll(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	if err := s.SetQueueLimit(ctx, "q", 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Pause(ctx, "p"); err != nil {
		t.Fatal(err)
	}

	e, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	blocker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close(ctx)
	if _, err := blocker.Exec(ctx, "SELECT pg_advisory_lock($1)", e.claimKey); err != nil {
		t.Fatal(err)
	}

	c := claim.Claimant{WorkerID: "w", Host: "h", PID: os.Getpid(), Lease: time.Minute, LogDir: t.TempDir()}
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	claimOne := func() {
		j, _, err := e.Claim(ctx, claim.ClaimParams{Claimant: c, Now: time.Now()})
		if err != nil && !errors.Is(err, claim.ErrNoJob) {
			t.Error(err)
		}
		mu.Lock()
		got = append(got, j.ID)
		mu.Unlock()
	}
	wg.Go(claimOne)
	waitGroup(t, e, func(sending, queued int) bool { return sending == 1 && queued == 0 })
	wg.Go(claimOne)
	waitGroup(t, e, func(sending, queued int) bool { return sending == maxInFlight && queued == 0 })
	for range 4 {
		wg.Go(claimOne)
	}
	waitGroup(t, e, func(sending, queued int) bool { return queued == 4 })
	if _, err := blocker.Exec(ctx, "SELECT pg_advisory_unlock($1)", e.claimKey); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	slices.Sort(got)
	want := []string{"", "", "free", "q-3", "q-4", "q-5"}
	if !slices.Equal(got, want) {
		t.Errorf("6 claims in 3 groups took %q, want %q (q's limit 3, p paused, blocked waiting)", got, want)
	}
	if g, w := e.group.groups.Load(), e.group.widest.Load(); g != 3 || w != 4 {
		t.Errorf("6 claims went in %d transactions, the widest of %d; want 3, the widest of 4", g, w)
	}
}

// waitGroup polls e's committer until ok says its state is reached.
func waitGroup(t *testing.T, e *Engine, ok func(sending, queued int) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.group.mu.Lock()
		done := ok(e.group.sending, len(e.group.queue))
		e.group.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the committer did not reach the state waited for in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

package postgres

import (
	"context"
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
	s := openStore(t, dsn)
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

// TestGroupFinish: finishes that gather while transactions are in flight
// are one statement in the next (finishManyQuery), which moves each job
// only while its run is the current one: the run recovered meanwhile is
// ErrLost, and changes nothing, while the others complete or fail as
// alone, close their runs and count down a dependent of two of them
// twice. The transactions in flight are held in the server by row locks
// taken outside, so the third group is certain to form.
func TestGroupFinish(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	s := openStore(t, dsn)
	var jobs []claim.NewJob
	for i, id := range []string{"x1", "x2", "a", "b", "c", "d"} {
		jobs = append(jobs, claim.NewJob{ID: id, Command: "true", Priority: 10 - i})
	}
	jobs = append(jobs, claim.NewJob{ID: "dep", Command: "true", After: []string{"a", "b"}})
	if _, err := s.EnqueueAll(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	e, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := claim.Claimant{WorkerID: "w", Host: "h", PID: os.Getpid(), Lease: time.Minute, LogDir: t.TempDir()}
	runs := map[string]claim.Run{}
	for range 6 {
		j, r, err := e.Claim(ctx, claim.ClaimParams{Claimant: c, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		runs[j.ID] = r
	}
	inflight, err := s.InFlight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range inflight {
		if f.JobID == "c" {
			if _, err := s.Recover(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	}

	// a and x1 carry their starts to their ends (the group's statement,
	// and a lone finish's); b's was recorded on its own, and stays.
	execAt := time.Unix(1700000000, 0)
	for _, id := range []string{"a", "x1"} {
		r := runs[id]
		r.PGID, r.ExecAt, r.Confined = 4242, execAt, "cgroup"
		runs[id] = r
	}
	if err := e.Started(ctx, runs["b"], 77, execAt); err != nil {
		t.Fatal(err)
	}
	blocker, tx := holdRows(t, dsn, "SELECT 1 FROM jobs WHERE id IN ('x1', 'x2') FOR UPDATE")
	zero, one := 0, 1
	complete := func(id string) claim.FinishParams {
		return claim.FinishParams{Run: runs[id], State: claim.Completed, SetExitCode: true, SetError: true, ExitCode: &zero,
			Finished: true, Outcome: claim.OutcomeCompleted, Now: time.Now()}
	}
	params := map[string]claim.FinishParams{"x1": complete("x1"), "x2": complete("x2"), "a": complete("a"),
		"b": complete("b"), "c": complete("c"), "d": {Run: runs["d"], State: claim.Failed, SetExitCode: true,
			SetError: true, ExitCode: &one, Error: "boom", RunAfter: time.Now().Add(time.Hour),
			Outcome: claim.OutcomeFailed, Now: time.Now()}}
	var mu sync.Mutex
	ended, errs := map[string]claim.State{}, map[string]error{}
	var wg sync.WaitGroup
	finish := func(id string) func() {
		return func() {
			st, err := e.Finish(ctx, params[id])
			mu.Lock()
			ended[id], errs[id] = st, err
			mu.Unlock()
		}
	}
	wg.Go(finish("x1"))
	waitGroup(t, e, func(sending, queued int) bool { return sending == 1 && queued == 0 })
	wg.Go(finish("x2"))
	waitGroup(t, e, func(sending, queued int) bool { return sending == maxInFlight && queued == 0 })
	for _, id := range []string{"a", "b", "c", "d"} {
		wg.Go(finish(id))
	}
	waitGroup(t, e, func(sending, queued int) bool { return queued == 4 })
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	if g, w := e.group.groups.Load(), e.group.widest.Load(); g != 6+3 || w != 4 {
		t.Errorf("6 finishes went in %d transactions (after 6 claims), the widest of %d; want 3, the widest of 4", g-6, w)
	}
	want := map[string]claim.State{"x1": claim.Completed, "x2": claim.Completed, "a": claim.Completed,
		"b": claim.Completed, "d": claim.Failed}
	for id, st := range want {
		if errs[id] != nil || ended[id] != st {
			t.Errorf("Finish(%s) = %q, %v; want %q", id, ended[id], errs[id], st)
		}
	}
	if !errors.Is(errs["c"], claim.ErrLost) {
		t.Errorf("Finish(c) after its run was recovered = %q, %v; want ErrLost", ended["c"], errs["c"])
	}
	for id, st := range map[string]claim.State{"a": claim.Completed, "b": claim.Completed, "c": claim.Pending,
		"d": claim.Failed, "dep": claim.Pending} {
		j, err := s.Get(ctx, id)
		if err != nil || j.State != st {
			t.Errorf("after the group, %s is %q (%v), want %q", id, j.State, err, st)
		}
	}
	var waiting int
	var outcomes []string
	if err := blocker.QueryRow(ctx, "SELECT waiting FROM jobs WHERE id = 'dep'").Scan(&waiting); err != nil || waiting != 0 {
		t.Errorf("dep waits for %d (%v) after both its dependencies completed in one statement, want 0", waiting, err)
	}
	rows, err := blocker.Query(ctx, "SELECT job_id || ':' || coalesce(outcome, '') || ':' || coalesce(error, '') FROM runs ORDER BY job_id")
	if err == nil {
		outcomes, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	wantRuns := []string{"a:completed:", "b:completed:", "c:lost:worker lost", "d:failed:boom", "x1:completed:", "x2:completed:"}
	if err != nil || !slices.Equal(outcomes, wantRuns) {
		t.Errorf("runs after the group: %q (%v), want %q", outcomes, err, wantRuns)
	}
	rows, err = blocker.Query(ctx, `SELECT job_id || ':' || coalesce(pgid::text, '') || ':' || coalesce(exec_at::text, '') || ':' ||
		coalesce(confined, '') FROM runs WHERE job_id IN ('a', 'b', 'd', 'x1') ORDER BY job_id`)
	if err == nil {
		outcomes, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	at := fmt.Sprint(execAt.UnixNano())
	wantStarts := []string{"a:4242:" + at + ":cgroup", "b:77:" + at + ":", "d:::", "x1:4242:" + at + ":cgroup"}
	if err != nil || !slices.Equal(outcomes, wantStarts) {
		t.Errorf("starts after the group: %q (%v), want %q", outcomes, err, wantStarts)
	}
}

// rig is an engine on a store of jobs whose committer a test watches, the
// runs of its first claims, and calls of its slots in goroutines: each
// claim's job and each finish's state are kept.
type rig struct {
	t    *testing.T
	ctx  context.Context
	e    *Engine
	c    claim.Claimant
	runs map[string]claim.Run
	wg   sync.WaitGroup

	mu      sync.Mutex
	claimed []string
	ended   map[string]claim.State
}

// newRig enqueues jobs at dsn, opens an engine and claims the first
// claims of them. A test that fails leaves its calls held in the server:
// they are waited for once its locks are let go (t.Cleanup runs last
// first), before the engine closes.
func newRig(t *testing.T, dsn string, jobs []claim.NewJob, claims int) *rig {
	ctx := t.Context()
	s := openStore(t, dsn)
	if _, err := s.EnqueueAll(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	e, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	g := &rig{t: t, ctx: ctx, e: e, runs: map[string]claim.Run{}, ended: map[string]claim.State{},
		c: claim.Claimant{WorkerID: "w", Host: "h", PID: os.Getpid(), Lease: time.Minute, LogDir: t.TempDir()}}
	t.Cleanup(g.wg.Wait)
	for range claims {
		j, r, err := e.Claim(ctx, claim.ClaimParams{Claimant: g.c, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		g.runs[j.ID] = r
	}
	return g
}

// claim claims a job in a goroutine.
func (g *rig) claim() {
	g.wg.Go(func() {
		j, _, err := g.e.Claim(g.ctx, claim.ClaimParams{Claimant: g.c, Now: time.Now()})
		if err != nil {
			g.t.Error(err)
		}
		g.mu.Lock()
		g.claimed = append(g.claimed, j.ID)
		g.mu.Unlock()
	})
}

// finish completes the run of job id in a goroutine.
func (g *rig) finish(id string) {
	g.wg.Go(func() {
		zero := 0
		st, err := g.e.Finish(g.ctx, claim.FinishParams{Run: g.runs[id], State: claim.Completed, SetExitCode: true,
			SetError: true, ExitCode: &zero, Finished: true, Outcome: claim.OutcomeCompleted, Now: time.Now()})
		if err != nil {
			g.t.Error(err)
		}
		g.mu.Lock()
		g.ended[id] = st
		g.mu.Unlock()
	})
}

// wait waits until the committer has sending groups in flight and queued
// calls in its queue.
func (g *rig) wait(sending, queued int) {
	g.t.Helper()
	waitGroup(g.t, g.e, func(s, q int) bool { return s == sending && q == queued })
}

// TestSecondGroupAsBig: a group goes beside one in flight only once it is
// at least as big; until then its calls wait, and they go as soon as they
// are as many. Each group in flight is held in the server by a lock taken
// outside (the claim lock, a job's row), so every state is certain; the
// hold has no time bound here (TestHeldGroupHoldsOthersBriefly has one).
func TestSecondGroupAsBig(t *testing.T) {
	defer func(d time.Duration) { maxHold = d }(maxHold)
	maxHold = time.Hour
	dsn := pgtest.DSN(t)
	var jobs []claim.NewJob
	for i := range 4 {
		jobs = append(jobs, claim.NewJob{ID: fmt.Sprintf("r%d", i), Command: "true", Priority: 9 - i},
			claim.NewJob{ID: fmt.Sprintf("c%d", i), Command: "true"})
	}
	jobs = append(jobs, claim.NewJob{ID: "limited", Command: "true", Queue: "other"})
	g := newRig(t, dsn, jobs, 4)
	ctx := g.ctx
	if err := openStore(t, dsn).SetQueueLimit(ctx, "other", 1); err != nil { // so that claims take the claim lock
		t.Fatal(err)
	}
	blocker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blocker.Close(ctx) })
	lock := func(sql string) {
		if _, err := blocker.Exec(ctx, sql, g.e.claimKey); err != nil {
			t.Fatal(err)
		}
	}
	lock("SELECT pg_advisory_lock($1)")
	_, holdR0 := holdRows(t, dsn, "SELECT 1 FROM jobs WHERE id = 'r0' FOR UPDATE")
	_, holdR1 := holdRows(t, dsn, "SELECT 1 FROM jobs WHERE id = 'r1' FOR UPDATE")

	g.claim() // a group of one, held by the claim lock
	g.wait(1, 0)
	g.finish("r0") // as big as the one in flight: goes, held by r0's row
	g.wait(2, 0)
	for _, id := range []string{"r1", "r2", "r3"} {
		g.finish(id)
	}
	g.wait(2, 3)
	if err := holdR0.Rollback(ctx); err != nil { // r0's group ends; the three go, held by r1's row
		t.Fatal(err)
	}
	g.wait(2, 0)
	lock("SELECT pg_advisory_unlock($1)")
	g.wait(1, 0) // the claim's group ended; the group of three is in flight
	lock("SELECT pg_advisory_lock($1)")

	g.claim()
	g.wait(1, 1) // one call is too small to go beside three
	g.claim()
	g.wait(1, 2)
	g.claim()
	g.wait(2, 0) // three are as many: they go, held by the claim lock
	if err := holdR1.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	lock("SELECT pg_advisory_unlock($1)")
	g.wg.Wait()

	slices.Sort(g.claimed)
	if want := []string{"c0", "c1", "c2", "c3"}; !slices.Equal(g.claimed, want) {
		t.Errorf("the claims took %q, want %q", g.claimed, want)
	}
	for _, id := range []string{"r0", "r1", "r2", "r3"} {
		if g.ended[id] != claim.Completed {
			t.Errorf("Finish(%s) = %q, want completed", id, g.ended[id])
		}
	}
	if n, w := g.e.group.groups.Load(), g.e.group.widest.Load(); n != 4+4 || w != 3 {
		t.Errorf("8 calls went in %d transactions (after 4 claims), the widest of %d; want 4, the widest of 3", n-4, w)
	}
}

// TestHeldGroupHoldsOthersBriefly: a call too small to go beside a group
// in flight goes anyway once it has waited maxHold, though that group is
// held in the server (by a job's row, locked outside) for as long as the
// test likes: one transaction held up by a lock must not hold the worker's
// other writes with it.
func TestHeldGroupHoldsOthersBriefly(t *testing.T) {
	defer func(d time.Duration) { maxHold = d }(maxHold)
	maxHold = 50 * time.Millisecond
	dsn := pgtest.DSN(t)
	var jobs []claim.NewJob
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		jobs = append(jobs, claim.NewJob{ID: id, Command: "true", Priority: 9 - i})
	}
	g := newRig(t, dsn, jobs, 4)
	ctx := g.ctx
	_, holdA := holdRows(t, dsn, "SELECT 1 FROM jobs WHERE id = 'a' FOR UPDATE")
	_, holdB := holdRows(t, dsn, "SELECT 1 FROM jobs WHERE id = 'b' FOR UPDATE")
	_, holdC := holdRows(t, dsn, "SELECT 1 FROM jobs WHERE id = 'c' FOR UPDATE")

	g.finish("a") // held by a's row
	g.wait(1, 0)
	g.finish("b") // held by b's row
	g.wait(2, 0)
	g.finish("c")
	g.finish("d")
	g.wait(2, 2)
	if err := holdA.Rollback(ctx); err != nil { // c and d go together, held by c's row
		t.Fatal(err)
	}
	g.wait(2, 0)
	if err := holdB.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	g.wait(1, 0) // only c and d's group is in flight, and stays

	g.claim()
	deadline := time.Now().Add(10 * time.Second)
	for g.mu.Lock(); len(g.claimed) == 0; g.mu.Lock() {
		g.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("a lone claim beside a group held in the server did not go in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	claimed := g.claimed
	g.mu.Unlock()
	if !slices.Equal(claimed, []string{"e"}) {
		t.Errorf("the claim beside the held group took %q, want e", claimed)
	}
	if err := holdC.Rollback(ctx); err != nil { // c and d's group ends
		t.Fatal(err)
	}
	g.wg.Wait()
}

// TestGroupPlansKept: a group's claim and finish run with the plans the
// server keeps for their prepared statements, never planned again for an
// execution's values (the server would plan the first five, at least), and
// the connection's own plan_cache_mode is as it was once the groups are done.
func TestGroupPlansKept(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	s := openStore(t, dsn)
	const n = 8
	batch := make([]claim.NewJob, n)
	for i := range batch {
		batch[i] = claim.NewJob{Command: "true"}
	}
	if _, err := s.EnqueueAll(ctx, batch); err != nil {
		t.Fatal(err)
	}
	e, err := Open(ctx, dsn+"&pool_max_conns=1") // one connection: its statements are the ones below
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var before string
	if err := e.pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&before); err != nil {
		t.Fatal(err)
	}
	c := claim.Claimant{WorkerID: "w", Host: "h", PID: os.Getpid(), Lease: time.Minute, LogDir: t.TempDir()}
	zero := 0
	for range n {
		_, r, err := e.Claim(ctx, claim.ClaimParams{Claimant: c, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Finish(ctx, claim.FinishParams{Run: r, State: claim.Completed, SetExitCode: true, ExitCode: &zero,
			Finished: true, Outcome: claim.OutcomeCompleted, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	var mode string
	if err := e.pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != before {
		t.Errorf("plan_cache_mode after the groups: %s, want %s, as before them", mode, before)
	}
	for name, q := range map[string]string{"claim": claimQuery, "finish": finishQuery} {
		var generic, custom int64
		err := e.pool.QueryRow(ctx, "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1", q).Scan(&generic, &custom)
		if err != nil {
			t.Fatalf("the %s statement among the connection's prepared statements: %v", name, err)
		}
		if custom != 0 || generic != n {
			t.Errorf("the %s statement ran %d times with its kept plan and was planned %d times for its values; want %d and 0", name, generic, custom, n)
		}
	}
}

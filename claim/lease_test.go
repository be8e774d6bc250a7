package claim_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// mustInFlight returns the one run in flight.
func mustInFlight(tb testing.TB, s *claim.Store) claim.InFlight {
	tb.Helper()
	fs, err := s.InFlight(tb.Context())
	if err != nil {
		tb.Fatalf("InFlight = %v", err)
	}
	if len(fs) != 1 {
		tb.Fatalf("InFlight = %d runs, want 1", len(fs))
	}
	return fs[0]
}

func TestInFlight(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		if fs, err := s.InFlight(ctx); err != nil || len(fs) != 0 {
			t.Errorf("InFlight on an idle queue = %v, %v; want none", fs, err)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true"})
		mustEnqueue(t, s, claim.NewJob{ID: "b", Command: "true"})
		_, r := mustClaim(t, s, claimant(t, "w1"))
		if err := s.Started(ctx, r, 777); err != nil {
			t.Fatal(err)
		}
		f := mustInFlight(t, s)
		r.PGID, r.ExecAt = 777, t0
		if f.Run != r || !f.LeaseUntil.Equal(t0.Add(30*time.Second)) {
			t.Errorf("InFlight = %+v, want run %+v with lease until %v", f, r, t0.Add(30*time.Second))
		}
	})
}

func TestRenew(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "mine", Command: "true"})
		mustEnqueue(t, s, claim.NewJob{ID: "theirs", Command: "true"})
		mustClaim(t, s, claimant(t, "w1"))
		mustClaim(t, s, claimant(t, "w2"))
		if err := s.RegisterWorker(ctx, claim.WorkerInfo{ID: "w1", Host: "testhost", PID: 1, Slots: 1}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(20 * time.Second)
		w1 := claim.WorkerInfo{ID: "w1", Host: "testhost", PID: 1, Slots: 1}
		r, err := s.Renew(ctx, w1, 30*time.Second)
		if want := []claim.RunID{{JobID: "mine", Attempt: 1}}; r.Stopping || r.Registered || err != nil || !slices.Equal(r.Runs, want) {
			t.Fatalf("Renew(w1) = %+v, %v; want runs %v, not stopping", r, err, want)
		}
		if got := mustGet(t, s, "mine").LeaseUntil; !got.Equal(t0.Add(50 * time.Second)) {
			t.Errorf("renewed lease until %v, want %v", got, t0.Add(50*time.Second))
		}
		if got := mustGet(t, s, "theirs").LeaseUntil; !got.Equal(t0.Add(30 * time.Second)) {
			t.Errorf("another worker's lease moved to %v, want %v", got, t0.Add(30*time.Second))
		}
		ws, _ := s.Workers(ctx)
		if len(ws) != 1 || !ws[0].HeartbeatAt.Equal(t0.Add(20*time.Second)) {
			t.Errorf("after Renew, workers = %+v, want w1 with heartbeat %v", ws, t0.Add(20*time.Second))
		}

		if n, err := s.RequestStop(ctx); n != 1 || err != nil {
			t.Fatalf("RequestStop = %d, %v; want 1, nil", n, err)
		}
		if r, err := s.Renew(ctx, w1, 30*time.Second); !r.Stopping || err != nil {
			t.Errorf("Renew(w1) after RequestStop = %+v, %v; want stopping", r, err)
		}
		// A worker missing from the registry (reaped while it stalled) still
		// renews, and is registered again.
		clk.Advance(time.Second)
		w2 := claim.WorkerInfo{ID: "w2", Host: "otherhost", PID: 2, Slots: 1}
		if r, err := s.Renew(ctx, w2, 30*time.Second); r.Stopping || !r.Registered || err != nil || len(r.Runs) != 1 {
			t.Errorf("Renew(unregistered w2) = %+v, %v; want its one run, registered again, not stopping", r, err)
		}
		if got := mustGet(t, s, "theirs").LeaseUntil; !got.Equal(t0.Add(51 * time.Second)) {
			t.Errorf("unregistered worker's lease until %v, want %v", got, t0.Add(51*time.Second))
		}
	})
}

// TestRenewSaysWhatItRenewed: a run that is no longer its worker's (lost,
// recovered by another worker, and claimed again by a third) is not among
// the runs a renewal returns, and its lease is not moved: the worker learns
// that it must stop it.
func TestRenewSaysWhatItRenewed(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true"})
		mustEnqueue(t, s, claim.NewJob{ID: "b", Command: "true"})
		mustClaim(t, s, claimant(t, "w1"))
		mustClaim(t, s, claimant(t, "w1"))
		fs, err := s.InFlight(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.JobID == "a" {
				if _, err := s.Recover(ctx, f); err != nil {
					t.Fatal(err)
				}
			}
		}
		mustClaim(t, s, claimant(t, "w2"))
		clk.Advance(time.Second)
		r, err := s.Renew(ctx, claim.WorkerInfo{ID: "w1", Host: "testhost", PID: 1, Slots: 2}, 30*time.Second)
		if want := []claim.RunID{{JobID: "b", Attempt: 1}}; err != nil || !slices.Equal(r.Runs, want) {
			t.Errorf("Renew(w1) = %+v, %v; want runs %v: run 1 of a is no longer w1's", r, err, want)
		}
		if got := mustGet(t, s, "a"); got.WorkerID != "w2" || !got.LeaseUntil.Equal(t0.Add(30*time.Second)) {
			t.Errorf("job a: worker %s, lease until %v; want w2's claim untouched", got.WorkerID, got.LeaseUntil)
		}
	})
}

// TestRenewRegistersAgain: a worker whose registry row a reaper removed
// (it could not reach the store for longer than its lease) is registered
// again by its next renewal, as it was (its start kept), and reappears
// for status and `worker stop`. The registration gives it no job back:
// its run, recovered meanwhile and claimed by another worker, stays that
// worker's, and is not among the runs renewed.
func TestRenewRegistersAgain(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		w1 := claim.WorkerInfo{ID: "w1", Host: "host-a", PID: 11, Slots: 3, Queues: []string{"mail", "batch"}, StartedAt: t0}
		if err := s.RegisterWorker(ctx, w1); err != nil {
			t.Fatal(err)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true"})
		mustEnqueue(t, s, claim.NewJob{ID: "b", Command: "true"})
		mustClaim(t, s, claimant(t, "w1"))
		mustClaim(t, s, claimant(t, "w1"))

		// w1 is away for longer than its lease: another worker reaps its
		// row and its run of a, and claims a again.
		clk.Advance(40 * time.Second)
		if err := s.RemoveWorker(ctx, "w1"); err != nil {
			t.Fatal(err)
		}
		for _, f := range mustAllInFlight(t, s) {
			if f.JobID == "a" {
				if _, err := s.Recover(ctx, f); err != nil {
					t.Fatal(err)
				}
			}
		}
		mustClaim(t, s, claimant(t, "w2"))
		if n, err := s.RequestStop(ctx); n != 0 || err != nil {
			t.Fatalf("RequestStop with w1 unregistered = %d, %v; want 0", n, err)
		}

		clk.Advance(time.Second)
		r, err := s.Renew(ctx, w1, 30*time.Second)
		if want := []claim.RunID{{JobID: "b", Attempt: 1}}; err != nil || !r.Registered || r.Stopping || !slices.Equal(r.Runs, want) {
			t.Fatalf("Renew(w1) after its row was reaped = %+v, %v; want registered again, runs %v", r, err, want)
		}
		if got := mustGet(t, s, "a"); got.WorkerID != "w2" || got.State != claim.Processing || got.Runs != 2 {
			t.Errorf("job a after w1 registered again: worker %s, %s, run %d; want w2's run 2, untouched", got.WorkerID, got.State, got.Runs)
		}
		want := w1
		want.HeartbeatAt = t0.Add(41 * time.Second)
		want.SlotsApplied = w1.Slots
		ws, err := s.Workers(ctx)
		for i := range ws {
			ws[i].SilentSince = time.Time{} // the server's start
		}
		if err != nil || len(ws) != 1 || !reflect.DeepEqual(ws[0], want) {
			t.Errorf("Workers() after Renew = %+v, %v; want %+v", ws, err, want)
		}
		if r, err := s.Renew(ctx, w1, 30*time.Second); err != nil || r.Registered {
			t.Errorf("second Renew(w1) = %+v, %v; want it registered already", r, err)
		}
		// It obeys `worker stop` again.
		if n, err := s.RequestStop(ctx); n != 1 || err != nil {
			t.Errorf("RequestStop = %d, %v; want 1", n, err)
		}
		if r, err := s.Renew(ctx, w1, 30*time.Second); err != nil || !r.Stopping {
			t.Errorf("Renew(w1) after RequestStop = %+v, %v; want stopping", r, err)
		}

		// A worker that was stopping when its row went is registered
		// again as stopping.
		if err := s.RemoveWorker(ctx, "w1"); err != nil {
			t.Fatal(err)
		}
		w1.Stopping = true
		if r, err := s.Renew(ctx, w1, 30*time.Second); err != nil || !r.Registered || !r.Stopping {
			t.Errorf("Renew(stopping w1) after its row was reaped = %+v, %v; want registered again, stopping", r, err)
		}
		if ws, _ := s.Workers(ctx); len(ws) != 1 || !ws[0].Stopping {
			t.Errorf("Workers() = %+v, want w1 stopping", ws)
		}
	})
}

// mustAllInFlight returns every run in flight.
func mustAllInFlight(tb testing.TB, s *claim.Store) []claim.InFlight {
	tb.Helper()
	fs, err := s.InFlight(tb.Context())
	if err != nil {
		tb.Fatalf("InFlight = %v", err)
	}
	return fs
}

func TestRecover(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true", MaxRetries: intp(2)})
		c := claimant(t, "crashed")
		mustClaim(t, s, c)
		clk.Advance(31 * time.Second)
		f := mustInFlight(t, s)
		next, err := s.Recover(ctx, f)
		if next != claim.Pending || err != nil {
			t.Fatalf("Recover = %s, %v; want pending, nil", next, err)
		}
		j := mustGet(t, s, "a")
		if j.State != claim.Pending || j.Attempts != 0 || j.Lost != 1 || j.Runs != 1 || j.WorkerID != "" ||
			!j.LeaseUntil.IsZero() || !j.RunAfter.Equal(clk.Now()) || !j.FinishedAt.IsZero() {
			t.Errorf("recovered job = %+v, want pending, attempts 0, lost 1, runnable now", j)
		}
		if runs := mustRuns(t, s, "a"); runs[0].Outcome != claim.OutcomeLost || runs[0].EndedAt.IsZero() {
			t.Errorf("lost run = %+v, want outcome lost and ended", runs[0])
		}
		if _, err := s.Recover(ctx, f); !errors.Is(err, claim.ErrLost) {
			t.Errorf("second Recover of the same run = %v, want ErrLost", err)
		}

		// The crashed worker comes back and reports: too late.
		if _, err := s.Complete(ctx, f.Run); !errors.Is(err, claim.ErrLost) {
			t.Errorf("Complete after Recover = %v, want ErrLost", err)
		}
		if _, err := s.Fail(ctx, claim.Job{ID: "a", Attempts: 1, MaxRetries: 2, BackoffBase: 2}, f.Run, intp(1), "boom", time.Hour); !errors.Is(err, claim.ErrLost) {
			t.Errorf("Fail after Recover = %v, want ErrLost", err)
		}
		if err := s.Release(ctx, f.Run, "stop"); !errors.Is(err, claim.ErrLost) {
			t.Errorf("Release after Recover = %v, want ErrLost", err)
		}

		// The lost run did not count: two real failures are still needed.
		c2 := claimant(t, "w2")
		j, r := mustClaim(t, s, c2)
		if j.Attempts != 1 || r.Attempt != 2 || r.StdoutPath != filepath.Join(c2.LogDir, "a", "2.out") {
			t.Fatalf("claim after Recover: attempts %d, run %d, stdout %s", j.Attempts, r.Attempt, r.StdoutPath)
		}
		// Even once the same worker claims the job again, the old run stays lost.
		if _, err := s.Complete(ctx, f.Run); !errors.Is(err, claim.ErrLost) {
			t.Errorf("Complete of the lost run while the job runs again = %v, want ErrLost", err)
		}
		if next, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); next != claim.Failed || err != nil {
			t.Errorf("first real Fail = %s, %v; want failed", next, err)
		}
	})
}

func TestRecoverFiveLossesIsDead(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true", MaxRetries: intp(1)})
		for i := 1; i <= claim.MaxLost; i++ {
			mustClaim(t, s, claimant(t, fmt.Sprintf("w%d", i)))
			clk.Advance(time.Minute)
			want := claim.Pending
			if i == claim.MaxLost {
				want = claim.Dead
			}
			if next, err := s.Recover(ctx, mustInFlight(t, s)); next != want || err != nil {
				t.Fatalf("Recover of loss %d = %s, %v; want %s", i, next, err, want)
			}
		}
		j := mustGet(t, s, "a")
		if j.State != claim.Dead || j.LastError != "worker lost 5 times" || j.Lost != 5 || j.Attempts != 0 || j.FinishedAt.IsZero() {
			t.Errorf("job after 5 losses = %+v, want dead with \"worker lost 5 times\"", j)
		}
		if runs := mustRuns(t, s, "a"); len(runs) != 5 || runs[4].Outcome != claim.OutcomeLost {
			t.Errorf("runs after 5 losses = %+v", runs)
		}
		if _, _, err := s.Claim(ctx, claimant(t, "w")); !errors.Is(err, claim.ErrNoJob) {
			t.Errorf("Claim of a job lost 5 times = %v, want ErrNoJob", err)
		}
		// dlq retry forgives the losses.
		if j, err := s.Retry(ctx, "a"); err != nil || j.Lost != 0 || j.State != claim.Pending {
			t.Errorf("Retry after 5 losses = %+v, %v; want pending, lost 0", j, err)
		}
	})
}

// TestRecoverRace: two reapers (separate Stores) recover one lost run at
// once; exactly one wins.
func TestRecoverRace(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		a, b := db.open(t), db.open(t)
		for i := range 20 {
			id := fmt.Sprintf("job-%d", i)
			mustEnqueue(t, a, claim.NewJob{ID: id, Command: "true"})
			_, r := mustClaim(t, a, claimant(t, "crashed"))
			f := claim.InFlight{Run: r}

			var wg sync.WaitGroup
			start := make(chan struct{})
			results := make([]error, 2)
			for k, s := range []*claim.Store{a, b} {
				wg.Go(func() {
					<-start
					_, results[k] = s.Recover(ctx, f)
				})
			}
			close(start)
			wg.Wait()

			wins := 0
			for _, err := range results {
				switch {
				case err == nil:
					wins++
				case !errors.Is(err, claim.ErrLost):
					t.Errorf("Recover(%s) = %v, want nil or ErrLost", id, err)
				}
			}
			if wins != 1 {
				t.Fatalf("two concurrent Recover(%s): %d won (%v), want exactly 1", id, wins, results)
			}
			if j := mustGet(t, a, id); j.Lost != 1 || j.Attempts != 0 {
				t.Errorf("after racing recovers, %s: lost %d, attempts %d; want 1, 0", id, j.Lost, j.Attempts)
			}
			if _, r := mustClaim(t, a, claimant(t, "w")); r.JobID != id {
				t.Fatalf("claimed %s, want %s", r.JobID, id)
			} else if _, err := a.Complete(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	})
}

package claim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// TestWait: Wait returns once every job is completed or dead, woken by a
// change made through another Store (the fallback poll is an hour).
func TestWait(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		waiter, worker := db.open(t), db.open(t)
		mustEnqueue(t, worker, claim.NewJob{ID: "done", Command: "true"})
		mustEnqueue(t, worker, claim.NewJob{ID: "doomed", Command: "false", MaxRetries: intp(1)})
		c := claimant(t, "w")
		_, r := mustClaim(t, worker, c)
		if _, err := worker.Complete(ctx, r); err != nil {
			t.Fatal(err)
		}

		type result struct {
			jobs []claim.Job
			err  error
		}
		got := make(chan result, 1)
		go func() {
			js, err := waiter.Wait(ctx, []string{"done", "doomed"}, time.Hour)
			got <- result{js, err}
		}()

		j, r := mustClaim(t, worker, c)
		if _, err := worker.Fail(ctx, j, r, intp(1), "exit status 1", time.Hour); err != nil {
			t.Fatal(err)
		}
		select {
		case res := <-got:
			if res.err != nil || len(res.jobs) != 2 || res.jobs[0].State != claim.Completed || res.jobs[1].State != claim.Dead {
				t.Errorf("Wait(done, doomed) = %+v, %v; want completed, dead", res.jobs, res.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Wait did not return within 10s of the last job dying")
		}
	})
}

func TestWaitErrors(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, _ := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "pending", Command: "true"})
		if _, err := s.Wait(t.Context(), []string{"pending", "nope"}, time.Hour); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("Wait(pending, nope) = %v, want ErrNotFound", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		js, err := s.Wait(ctx, []string{"pending"}, time.Hour)
		if !errors.Is(err, context.DeadlineExceeded) || len(js) != 1 || js[0].State != claim.Pending {
			t.Errorf("Wait(pending) past its deadline = %+v, %v; want the pending job and DeadlineExceeded", js, err)
		}
	})
}

// TestWaitForARestartedJob: a job seen finished and then restarted is
// waited for again; what Wait returns is finished, every job of it.
func TestWaitForARestartedJob(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		waiter, worker := db.open(t), db.open(t)
		mustEnqueue(t, worker, claim.NewJob{ID: "a", Command: "true"})
		mustEnqueue(t, worker, claim.NewJob{ID: "b", Command: "true"})
		c := claimant(t, "w")
		complete := func(want string) {
			t.Helper()
			j, r := mustClaim(t, worker, c)
			if j.ID != want {
				t.Fatalf("claimed %s, want %s", j.ID, want)
			}
			if _, err := worker.Complete(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		complete("a")
		got := make(chan []claim.Job, 1)
		go func() {
			js, err := waiter.Wait(ctx, []string{"a", "b"}, time.Hour)
			if err != nil {
				t.Error(err)
			}
			got <- js
		}()
		if _, err := worker.Restart(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		complete("b") // a is pending again, behind b (same priority, later run_after)
		complete("a")
		select {
		case js := <-got:
			for _, j := range js {
				if !j.State.Finished() {
					t.Errorf("Wait returned job %s %s: it was restarted and not finished", j.ID, j.State)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Wait did not return within 10s of both jobs completing")
		}
	})
}

package claim_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
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

// TestGetAllReadsInOneStatement: GetAll returns the jobs of ids in their
// order (an id named twice, twice), with pending reasons, in one call of
// the engine and no Get: wait reads every job it waits for at each look,
// 165,000 of them for a wait --all of a big queue, and a Get of each
// spent 9 s of CPU in a 15 s wait. An unknown id is ErrNotFound naming it.
func TestGetAllReadsInOneStatement(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, e := db.openCounted(t)
		var ids []string
		for i := range 300 {
			ids = append(ids, mustEnqueue(t, s, claim.NewJob{Command: "true", Queue: fmt.Sprintf("q%d", i%3)}).ID)
		}
		mustCancel(t, s, ids[7])
		if err := s.Pause(ctx, "q1"); err != nil {
			t.Fatal(err)
		}
		asked := append(slices.Clone(ids[150:]), ids[:150]...)
		asked = append(asked, ids[3])
		e.Calls("Get")
		e.Calls("GetAll")
		jobs, err := s.GetAll(ctx, asked)
		if err != nil || len(jobs) != len(asked) {
			t.Fatalf("GetAll(%d ids) = %d jobs, %v", len(asked), len(jobs), err)
		}
		for i, j := range jobs {
			if j.ID != asked[i] {
				t.Fatalf("GetAll: job %d is %s, want %s", i, j.ID, asked[i])
			}
			if want := mustGet(t, s, j.ID); !reflect.DeepEqual(j, want) {
				t.Fatalf("GetAll: job %s = %+v, want %+v as Get reads it", j.ID, j, want)
			}
		}
		if got := e.Calls("GetAll"); got != 1 {
			t.Errorf("GetAll of %d jobs called the engine's GetAll %d times, want 1", len(asked), got)
		}
		if got := e.Calls("Get"); got != len(asked) { // the mustGets above, none of GetAll
			t.Errorf("GetAll and %d Gets called the engine's Get %d times, want %d", len(asked), got, len(asked))
		}
		if _, err := s.GetAll(ctx, []string{ids[0], "nope", ids[1]}); !errors.Is(err, claim.ErrNotFound) || !strings.Contains(err.Error(), "nope") {
			t.Errorf("GetAll with an unknown id = %v, want ErrNotFound naming it", err)
		}
		if jobs, err := s.GetAll(ctx, nil); len(jobs) != 0 || err != nil {
			t.Errorf("GetAll(nothing) = %v, %v; want nothing", jobs, err)
		}
	})
}

// TestResolveAllFindsWholeIDsAtOnce: wait $(list ...) of thousands of ids
// finds them in one read of the engine, not a Get each; prefixes and
// @last are still resolved one by one, and an id named twice is once.
func TestResolveAllFindsWholeIDsAtOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, e := db.openCounted(t)
		var ids []string
		for i := range 200 {
			ids = append(ids, mustEnqueue(t, s, claim.NewJob{ID: fmt.Sprintf("job-%03d", i), Command: "true"}).ID)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "solo-x", Command: "true"})
		e.Calls("Get")
		refs := append(slices.Clone(ids), "solo", ids[5], claim.LastJob)
		got, err := s.ResolveAll(ctx, refs)
		if want := append(ids, "solo-x"); err != nil || !slices.Equal(got, want) {
			t.Fatalf("ResolveAll(%d refs) = %d ids, %v; want the %d ids in order", len(refs), len(got), err, len(want))
		}
		if n := e.Calls("Get"); n > 1 { // solo, a prefix, is tried as an id first
			t.Errorf("ResolveAll of %d ids read %d jobs one by one, want at most 1", len(ids), n)
		}
		if _, err := s.ResolveAll(ctx, []string{ids[0], "nope"}); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("ResolveAll(%s, nope) = %v, want ErrNotFound", ids[0], err)
		}
	})
}

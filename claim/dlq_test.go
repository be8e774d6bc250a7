package claim_test

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func TestRetry(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "d", Command: "false", MaxRetries: intp(2)})
		c := claimant(t, "w")
		for range 2 {
			j, r := mustClaim(t, s, c)
			if _, err := s.Fail(ctx, j, r, intp(1), "exit status 1", time.Hour); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Hour)
		}
		before := mustRuns(t, s, "d")

		j, err := s.Retry(ctx, "d")
		if err != nil {
			t.Fatalf("Retry(d) = %v", err)
		}
		if j.State != claim.Pending || j.Attempts != 0 || j.Runs != 2 || j.LastError != "" || j.ExitCode != nil ||
			!j.FinishedAt.IsZero() || !j.RunAfter.Equal(clk.Now()) {
			t.Errorf("Retry(d) = %+v, want pending, attempts 0, runs 2, runnable now", j)
		}
		if got := mustGet(t, s, "d"); !reflect.DeepEqual(got, j) {
			t.Errorf("Get after Retry = %+v, want %+v", got, j)
		}
		if after := mustRuns(t, s, "d"); !reflect.DeepEqual(after, before) {
			t.Errorf("Retry changed the run history: %+v, want %+v", after, before)
		}

		// New runs continue the numbering, so no log file is reused.
		j, r := mustClaim(t, s, c)
		if j.Attempts != 1 || r.Attempt != 3 {
			t.Errorf("claim after Retry: attempts %d, run %d; want 1, 3", j.Attempts, r.Attempt)
		}
		for _, old := range before {
			if r.StdoutPath == old.StdoutPath || r.StderrPath == old.StderrPath {
				t.Errorf("run 3 logs to %s / %s, already used by run %d", r.StdoutPath, r.StderrPath, old.Attempt)
			}
		}
		// It gets max_retries fresh runs.
		if next, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); next != claim.Failed || err != nil {
			t.Errorf("first Fail after Retry = %s, %v; want failed", next, err)
		}
		if runs := mustRuns(t, s, "d"); len(runs) != 3 {
			t.Errorf("after Retry and a run, %d runs, want 3", len(runs))
		}
	})
}

func TestRetryErrors(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		c := claimant(t, "w")
		mustEnqueue(t, s, claim.NewJob{ID: "completed", Command: "true"})
		_, r := mustClaim(t, s, c)
		if _, err := s.Complete(ctx, r); err != nil {
			t.Fatal(err)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "failed", Command: "false"})
		j, r := mustClaim(t, s, c)
		if _, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); err != nil {
			t.Fatal(err)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "processing", Command: "true"})
		mustClaim(t, s, c)
		mustEnqueue(t, s, claim.NewJob{ID: "pending", Command: "true", Delay: time.Hour})

		tests := []struct {
			id   string
			want error
		}{
			{"pending", claim.ErrConflict},
			{"processing", claim.ErrConflict},
			{"failed", claim.ErrConflict},
			{"completed", claim.ErrConflict},
			{"nope", claim.ErrNotFound},
		}
		for _, tt := range tests {
			before, _ := s.Get(ctx, tt.id)
			if _, err := s.Retry(ctx, tt.id); !errors.Is(err, tt.want) {
				t.Errorf("Retry(%q) = %v, want %v", tt.id, err, tt.want)
			}
			if err := s.Purge(ctx, tt.id); !errors.Is(err, tt.want) {
				t.Errorf("Purge(%q) = %v, want %v", tt.id, err, tt.want)
			}
			if after, _ := s.Get(ctx, tt.id); !reflect.DeepEqual(after, before) {
				t.Errorf("refused Retry/Purge changed %s: %+v, want %+v", tt.id, after, before)
			}
		}
	})
}

func TestRetryAll(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		if js, err := s.RetryAll(ctx); len(js) != 0 || err != nil {
			t.Errorf("RetryAll with no dead jobs = %v, %v; want none, nil", js, err)
		}
		for _, id := range []string{"d1", "d2", "d3"} {
			mustKill(t, s, id)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "live", Command: "true"})
		js, err := s.RetryAll(ctx)
		if err != nil {
			t.Fatalf("RetryAll = %v", err)
		}
		got := ids(js)
		if got != "d1 d2 d3" {
			t.Errorf("RetryAll = %q, want d1 d2 d3", got)
		}
		for _, j := range js {
			if j.State != claim.Pending || j.Attempts != 0 || j.Runs != 1 {
				t.Errorf("RetryAll job %s = %s, attempts %d, runs %d; want pending, 0, 1", j.ID, j.State, j.Attempts, j.Runs)
			}
		}
		counts, _ := s.Counts(ctx)
		if counts[claim.Pending] != 4 || counts[claim.Dead] != 0 {
			t.Errorf("after RetryAll, counts = %v", counts)
		}
	})
}

// TestRetryUniqueKey: a dead job whose unique_key is live again cannot come
// back while that job lives; that is a conflict, not an internal error, and
// it does not hold up other dead jobs in RetryAll.
func TestRetryUniqueKey(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		c := claimant(t, "w")
		kill := func(id string) {
			t.Helper()
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "false", MaxRetries: intp(1), UniqueKey: "nightly"})
			j, r := mustClaim(t, s, c)
			if next, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); next != claim.Dead || err != nil {
				t.Fatalf("Fail(%s) = %s, %v", id, next, err)
			}
			clk.Advance(time.Minute)
		}
		kill("monday")
		kill("tuesday")
		mustKill(t, s, "unkeyed")

		// Two dead jobs share the key: RetryAll brings back the older one and
		// the unkeyed one, and leaves the other dead.
		js, err := s.RetryAll(ctx)
		if err != nil {
			t.Fatalf("RetryAll with two dead jobs of one unique_key = %v", err)
		}
		got := strings.Fields(ids(js))
		sort.Strings(got)
		if fmt.Sprint(got) != "[monday unkeyed]" {
			t.Errorf("RetryAll = %v, want [monday unkeyed]", got)
		}
		if j := mustGet(t, s, "tuesday"); j.State != claim.Dead {
			t.Errorf("tuesday is %s, want still dead", j.State)
		}
		_, err = s.Retry(ctx, "tuesday")
		if !errors.Is(err, claim.ErrConflict) || !strings.Contains(err.Error(), `unique_key "nightly", which job monday (pending) holds`) {
			t.Errorf("Retry(tuesday) while monday holds its unique_key = %v, want ErrConflict naming the unique_key and monday, pending", err)
		}
		if r, err := s.Enqueue(ctx, claim.NewJob{ID: "tuesday", Command: "false", Redrive: true}); !errors.Is(err, claim.ErrConflict) {
			t.Errorf("Enqueue(redrive tuesday) while monday holds its unique_key = %s, %v; want ErrConflict", r.Outcome, err)
		}
		if j := mustGet(t, s, "tuesday"); j.State != claim.Dead {
			t.Errorf("after refused retries, tuesday is %s, want dead", j.State)
		}
	})
}

func TestPurge(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		mustKill(t, s, "d")
		if err := s.Purge(ctx, "d"); err != nil {
			t.Fatalf("Purge(d) = %v", err)
		}
		if _, err := s.Get(ctx, "d"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("Get after Purge = %v, want ErrNotFound", err)
		}
		if runs := mustRuns(t, s, "d"); len(runs) != 0 {
			t.Errorf("Purge left %d runs", len(runs))
		}
		if err := s.Purge(ctx, "d"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("second Purge = %v, want ErrNotFound", err)
		}
		// The id is free again, and its runs start over.
		mustEnqueue(t, s, claim.NewJob{ID: "d", Command: "true"})
		if _, r := mustClaim(t, s, claimant(t, "w")); r.Attempt != 1 {
			t.Errorf("first run of a re-used id = %d, want 1", r.Attempt)
		}
	})
}

func TestPurgeFinished(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		c := claimant(t, "w")
		complete := func(id string) {
			t.Helper()
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "true"})
			_, r := mustClaim(t, s, c)
			if _, err := s.Complete(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		complete("old-1")
		mustKill(t, s, "old-dead")
		clk.Advance(time.Hour)
		complete("new-1")
		mustKill(t, s, "new-dead")
		mustEnqueue(t, s, claim.NewJob{ID: "pending", Command: "true"})
		cutoff := t0.Add(30 * time.Minute)

		for _, st := range []claim.State{claim.Pending, claim.Processing, claim.Failed, "bogus"} {
			if _, err := s.PurgeFinished(ctx, st, cutoff); !errors.Is(err, claim.ErrInvalid) {
				t.Errorf("PurgeFinished(%s) = %v, want ErrInvalid", st, err)
			}
		}
		tests := []struct {
			state claim.State
			want  string
		}{
			{claim.Completed, "[old-1]"},
			{claim.Dead, "[old-dead]"},
			{claim.Completed, "[]"},
		}
		for _, tt := range tests {
			got, err := s.PurgeFinished(ctx, tt.state, cutoff)
			sort.Strings(got)
			if err != nil || fmt.Sprint(got) != tt.want {
				t.Errorf("PurgeFinished(%s, %v) = %v, %v; want %s", tt.state, cutoff, got, err, tt.want)
			}
		}
		js, _ := s.List(ctx, claim.Filter{})
		if got := ids(js); got != "new-1 new-dead pending" {
			t.Errorf("after PurgeFinished, jobs = %q", got)
		}
		if runs := mustRuns(t, s, "old-1"); len(runs) != 0 {
			t.Errorf("PurgeFinished left %d runs of old-1", len(runs))
		}
	})
}

// TestHeldDead: the dead jobs a retry would refuse are exactly those whose
// unique_key a live job holds; unkeyed dead jobs and free keys are not.
func TestHeldDead(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		c := claimant(t, "w")
		kill := func(id, key string) {
			t.Helper()
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "false", MaxRetries: intp(1), UniqueKey: key})
			j, r := mustClaim(t, s, c)
			if next, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); next != claim.Dead || err != nil {
				t.Fatalf("Fail(%s) = %s, %v", id, next, err)
			}
			clk.Advance(time.Minute)
		}
		kill("monday", "nightly")
		kill("tuesday", "nightly")
		kill("solo", "weekly")
		mustKill(t, s, "unkeyed")
		if js, err := s.HeldDead(ctx); len(js) != 0 || err != nil {
			t.Errorf("HeldDead with no live job = %q, %v; want none", ids(js), err)
		}
		if _, err := s.RetryAll(ctx); err != nil {
			t.Fatal(err)
		}
		js, err := s.HeldDead(ctx)
		if got := ids(js); got != "tuesday" || err != nil {
			t.Errorf("HeldDead after RetryAll = %q, %v; want tuesday", got, err)
		}
	})
}

// TestDropEnv: env-retention drops the env of jobs completed or canceled
// before the cutoff, and of no other.
func TestDropEnv(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		c := claimant(t, "w")
		secret := map[string]string{"MY_SECRET_TOKEN": "s3cr3t"}
		run := func(id string, fail bool) {
			t.Helper()
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "true", Env: secret, MaxRetries: intp(1)})
			j, r := mustClaim(t, s, c)
			var err error
			if fail {
				_, err = s.Fail(ctx, j, r, intp(1), "exit status 1", time.Hour)
			} else {
				_, err = s.Complete(ctx, r)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		run("old-done", false)
		run("old-dead", true)
		mustEnqueue(t, s, claim.NewJob{ID: "old-canceled", Command: "true", Env: secret})
		if _, _, _, err := s.Cancel(ctx, "old-canceled"); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour)
		run("new-done", false)
		mustEnqueue(t, s, claim.NewJob{ID: "pending", Command: "true", Env: secret})
		n, err := s.DropEnv(ctx, t0.Add(30*time.Minute))
		if n != 2 || err != nil {
			t.Errorf("DropEnv = %d, %v; want 2 (old-done, old-canceled)", n, err)
		}
		for id, kept := range map[string]bool{"old-done": false, "old-canceled": false, "old-dead": true, "new-done": true, "pending": true} {
			j, err := s.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if (j.Env["MY_SECRET_TOKEN"] == "s3cr3t") != kept {
				t.Errorf("%s: env %v after DropEnv, want kept %v", id, j.Env, kept)
			}
		}
	})
}

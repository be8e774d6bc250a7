package claim_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// TestRunsPerMinute: runs count in the minute they ended, per outcome; runs
// still going and runs before the window do not count.
func TestRunsPerMinute(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		c := claimant(t, "w")
		for i := range 5 {
			mustEnqueue(t, s, claim.NewJob{ID: fmt.Sprintf("j%d", i), Command: "true", MaxRetries: intp(1)})
		}
		finish := func(ok bool) {
			t.Helper()
			j, r := mustClaim(t, s, c)
			var err error
			if ok {
				_, err = s.Complete(ctx, r)
			} else {
				_, err = s.Fail(ctx, j, r, intp(1), "boom", time.Hour)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		finish(true) // 03:00, before the window
		clk.Advance(time.Minute + 10*time.Second)
		finish(true) // 03:01:10
		finish(false)
		clk.Advance(2 * time.Minute)
		finish(true) // 03:03:10, then one more still running:
		mustClaim(t, s, c)
		got, err := s.RunsPerMinute(ctx, t0.Add(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		want := []claim.MinuteRuns{
			{Minute: t0.Add(time.Minute), Outcome: claim.OutcomeCompleted, N: 1},
			{Minute: t0.Add(time.Minute), Outcome: claim.OutcomeFailed, N: 1},
			{Minute: t0.Add(3 * time.Minute), Outcome: claim.OutcomeCompleted, N: 1},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("RunsPerMinute = %+v, want %+v", got, want)
		}
	})
}

// TestEndedRuns: a reader that keeps the last run's mark sees every ended
// run once, also runs that ended in the same nanosecond, and never one that
// is still running.
func TestEndedRuns(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		c := claimant(t, "w")
		for i := range 6 {
			mustEnqueue(t, s, claim.NewJob{ID: fmt.Sprintf("j%d", i), Command: "true"})
		}
		var want []string
		for i := range 5 {
			_, r := mustClaim(t, s, c)
			if err := s.Started(ctx, r, 1234); err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				clk.Advance(time.Second) // j1 ends when j0 does, j3 when j2
			}
			if _, err := s.Complete(ctx, r); err != nil {
				t.Fatal(err)
			}
			want = append(want, r.JobID)
		}
		mustClaim(t, s, c) // j5 runs on
		var seen []string
		var mark claim.RunMark
		for {
			runs, err := s.EndedRuns(ctx, mark, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) == 0 {
				break
			}
			for _, r := range runs {
				seen = append(seen, r.JobID)
				if r.ExecAt.IsZero() || r.EndedAt.Before(r.ExecAt) || r.ExecAt.Before(r.StartedAt) {
					t.Errorf("run %s: started %v, exec %v, ended %v: want them in that order", r.JobID, r.StartedAt, r.ExecAt, r.EndedAt)
				}
			}
			mark = runs[len(runs)-1].Mark()
		}
		if !reflect.DeepEqual(seen, want) {
			t.Errorf("ended runs in mark order = %v, want %v", seen, want)
		}
	})
}

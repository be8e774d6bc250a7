package claim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// output returns n bytes of numbered lines, so that any cut shows where it
// was made.
func output(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d\n", i)
	}
	return b.Bytes()[:n]
}

// mustRunTails returns the tails of run attempt of job id, bytes included,
// and checks that Runs, the light read, has the same sizes without them.
func mustRunTails(tb testing.TB, s *claim.Store, id string, attempt int) *claim.Tails {
	tb.Helper()
	runs, err := s.RunsWithTails(context.Background(), id)
	if err != nil || len(runs) < attempt {
		tb.Fatalf("RunsWithTails(%s) = %d runs, %v; want run %d", id, len(runs), err, attempt)
	}
	got := runs[attempt-1].Tails
	light := mustRuns(tb, s, id)[attempt-1].Tails
	switch {
	case (got == nil) != (light == nil):
		tb.Errorf("Runs(%s) run %d tails %+v, RunsWithTails %+v: both or neither", id, attempt, light, got)
	case light != nil && (light.Stdout.Data != nil || light.Stderr.Data != nil):
		tb.Errorf("Runs(%s) run %d read the tails' bytes; only RunsWithTails should", id, attempt)
	case light != nil && (light.Stdout.Size != got.Stdout.Size || light.Stderr.Size != got.Stderr.Size):
		tb.Errorf("Runs(%s) run %d sizes %d/%d, RunsWithTails %d/%d", id, attempt,
			light.Stdout.Size, light.Stderr.Size, got.Stdout.Size, got.Stderr.Size)
	}
	return got
}

// checkTail compares a stored tail with what a stream of whole bytes
// should leave: its last TailBytes, and its full size.
func checkTail(tb testing.TB, what string, got claim.Tail, whole []byte) {
	tb.Helper()
	want := whole[max(0, len(whole)-claim.TailBytes):]
	if !bytes.Equal(got.Data, want) || got.Size != int64(len(whole)) {
		tb.Errorf("%s tail = %d bytes ending %q, size %d; want the last %d bytes (ending %q), size %d",
			what, len(got.Data), got.Data[max(0, len(got.Data)-12):], got.Size, len(want), want[max(0, len(want)-12):], len(whole))
	}
	if got.Truncated() != (len(whole) > claim.TailBytes) {
		tb.Errorf("%s Truncated() = %v for a stream of %d bytes", what, got.Truncated(), len(whole))
	}
}

// TestRunTails: every end of a run keeps the tails its worker gives, cut to
// their last TailBytes, and reads them back as they were.
func TestRunTails(t *testing.T) {
	big := output(200 << 10)
	exact := output(claim.TailBytes)
	small := []byte("oops\n")
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		c := claimant(t, "w")
		end := func(id string, finish func(j claim.Job, r claim.Run) error) {
			t.Helper()
			// A queue each, so that a released job is not claimed again.
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "true", MaxRetries: intp(1), Queue: id})
			c.Queues = []string{id}
			j, r := mustClaim(t, s, c)
			if r.Tails != nil || mustRunTails(t, s, id, 1) != nil {
				t.Errorf("%s: a run that has not ended has tails", id)
			}
			clk.Advance(time.Second)
			// A worker hands over at most what it kept, and its size; a
			// store given more keeps the end of it.
			r.Tails = &claim.Tails{Stdout: claim.Tail{Data: big, Size: int64(len(big))},
				Stderr: claim.Tail{Data: small, Size: int64(len(small))}}
			if err := finish(j, r); err != nil {
				t.Fatalf("%s: end the run = %v", id, err)
			}
			got := mustRunTails(t, s, id, 1)
			if got == nil {
				t.Fatalf("%s: no tails kept", id)
			}
			checkTail(t, id+" stdout", got.Stdout, big)
			checkTail(t, id+" stderr", got.Stderr, small)
		}
		end("completed", func(_ claim.Job, r claim.Run) error { _, err := s.Complete(ctx, r); return err })
		end("failed", func(j claim.Job, r claim.Run) error {
			_, err := s.Fail(ctx, j, r, intp(1), "exit status 1", time.Hour)
			return err
		})
		end("released", func(_ claim.Job, r claim.Run) error { return s.Release(ctx, r, "interrupted") })
		end("canceled", func(j claim.Job, r claim.Run) error {
			if _, _, _, err := s.Cancel(ctx, j.ID); err != nil {
				return err
			}
			return s.EndCanceled(ctx, r, intp(143))
		})
		end("handed-on", func(_ claim.Job, r claim.Run) error {
			_, _, _, err := s.CompleteAndClaim(ctx, r, c)
			if errors.Is(err, claim.ErrNoJob) {
				return nil
			}
			return err
		})
		end("lost", func(_ claim.Job, r claim.Run) error {
			clk.Advance(time.Minute)
			f := mustInFlight(t, s)
			f.Tails = r.Tails
			_, err := s.Recover(ctx, f)
			return err
		})

		// Exactly TailBytes is kept whole, not truncated; silent streams
		// keep a tail of nothing, which is not "none kept".
		c.Queues = []string{"exact"}
		mustEnqueue(t, s, claim.NewJob{ID: "exact", Command: "true", Queue: "exact"})
		_, r := mustClaim(t, s, c)
		r.Tails = &claim.Tails{Stdout: claim.Tail{Data: exact, Size: int64(len(exact))}}
		if _, err := s.Complete(ctx, r); err != nil {
			t.Fatal(err)
		}
		got := mustRunTails(t, s, "exact", 1)
		checkTail(t, "exact stdout", got.Stdout, exact)
		if got.Stderr.Data != nil || got.Stderr.Size != 0 || got.Stderr.Truncated() {
			t.Errorf("silent stderr tail = %+v, want empty", got.Stderr)
		}

		// A run that ends without tails (lost where no one could read its
		// files; one that never started) keeps none.
		c.Queues = []string{"unread"}
		mustEnqueue(t, s, claim.NewJob{ID: "unread", Command: "true", Queue: "unread"})
		mustClaim(t, s, c)
		clk.Advance(time.Minute)
		if _, err := s.Recover(ctx, mustInFlight(t, s)); err != nil {
			t.Fatal(err)
		}
		if got := mustRunTails(t, s, "unread", 1); got != nil {
			t.Errorf("run lost without tails has tails %+v, want none", got)
		}
	})
}

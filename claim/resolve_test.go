package claim_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

func TestResolveIDPrefixAndLast(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		if _, err := s.Resolve(ctx, claim.LastJob); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("Resolve(@last) on an empty store = %v, want ErrNotFound", err)
		}
		for _, id := range []string{"build-1", "build-12", "build-2", "deploy"} {
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "true"})
		}
		for _, tc := range []struct{ ref, want string }{
			{"deploy", "deploy"}, {"dep", "deploy"}, {"d", "deploy"},
			{"build-2", "build-2"}, {"build-1", "build-1"}, // exact wins over a longer id
			{"build-12", "build-12"}, {claim.LastJob, "deploy"},
		} {
			if got, err := s.Resolve(ctx, tc.ref); got != tc.want || err != nil {
				t.Errorf("Resolve(%q) = %q, %v; want %q", tc.ref, got, err, tc.want)
			}
		}
		_, err := s.Resolve(ctx, "build")
		if !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), "build-1 build-12 build-2") {
			t.Errorf("Resolve(build) = %v, want ErrInvalid naming build-1 build-12 build-2", err)
		}
		for _, ref := range []string{"nosuch", "x", "@first", "a b"} {
			if got, err := s.Resolve(ctx, ref); !errors.Is(err, claim.ErrNotFound) && !errors.Is(err, claim.ErrInvalid) {
				t.Errorf("Resolve(%q) = %q, %v; want an error", ref, got, err)
			}
		}
		if _, err := s.Resolve(ctx, "nosuch"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("Resolve(nosuch) = %v, want ErrNotFound", err)
		}
		// A mistyped @last gets the name of the newest job for a hint.
		var hinted interface{ Hint() string }
		if _, err := s.Resolve(ctx, "@lst"); !errors.Is(err, claim.ErrNotFound) || !errors.As(err, &hinted) || !strings.Contains(hinted.Hint(), claim.LastJob) {
			t.Errorf("Resolve(@lst) = %v, want ErrNotFound with a hint naming %s", err, claim.LastJob)
		}
		// An empty ref (`queuectl wait "$id"` with id unset) is bad input,
		// said as such: "no such job: " named nothing.
		if _, err := s.Resolve(ctx, ""); !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), "empty job id") {
			t.Errorf("Resolve(\"\") = %v, want ErrInvalid saying the id is empty", err)
		}
	})
}

// TestResolveAmbiguousSaysHowMany: an ambiguous prefix's error lists the
// first ten ids and says how many more match, counted up to a bound.
func TestResolveAmbiguousSaysHowMany(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		var jobs []claim.NewJob
		for i := range 47 {
			jobs = append(jobs, claim.NewJob{ID: fmt.Sprintf("batch-%02d", i), Command: "true"})
		}
		for i := range 1005 {
			jobs = append(jobs, claim.NewJob{ID: fmt.Sprintf("many-%04d", i), Command: "true"})
		}
		jobs = append(jobs, claim.NewJob{ID: "other", Command: "true"})
		if _, err := s.EnqueueAll(ctx, jobs); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ ref, want string }{
			{"batch", "job id prefix batch is ambiguous: batch-00 batch-01 batch-02 batch-03 batch-04 " +
				"batch-05 batch-06 batch-07 batch-08 batch-09 and 37 more; type more of the id"},
			{"batch-0", "job id prefix batch-0 is ambiguous: batch-00 batch-01 batch-02 batch-03 batch-04 " +
				"batch-05 batch-06 batch-07 batch-08 batch-09; type more of the id"},
			{"batch-1", "job id prefix batch-1 is ambiguous: batch-10 batch-11 batch-12 batch-13 batch-14 " +
				"batch-15 batch-16 batch-17 batch-18 batch-19; type more of the id"},
			{"batch-4", "job id prefix batch-4 is ambiguous: batch-40 batch-41 batch-42 batch-43 batch-44 " +
				"batch-45 batch-46; type more of the id"},
			{"many", "job id prefix many is ambiguous: many-0000 many-0001 many-0002 many-0003 many-0004 " +
				"many-0005 many-0006 many-0007 many-0008 many-0009 and at least 990 more; type more of the id"},
		} {
			_, err := s.Resolve(ctx, tc.ref)
			if !errors.Is(err, claim.ErrInvalid) || !strings.HasSuffix(err.Error(), tc.want) {
				t.Errorf("Resolve(%q) = %v, want ErrInvalid ending %q", tc.ref, err, tc.want)
			}
		}
	})
}

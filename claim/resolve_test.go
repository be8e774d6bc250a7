package claim_test

import (
	"errors"
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
	})
}

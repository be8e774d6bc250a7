package claim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A sound database reports no problem and a current schema; PostgreSQL
// reports its clock, SQLite none (it shares this host's).
func TestHealth(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		mustEnqueue(t, s, claim.NewJob{Command: "true"})
		h, err := s.Health(context.Background())
		if err != nil {
			t.Fatalf("Health() = %v", err)
		}
		if len(h.Problems) > 0 || h.Latest == 0 || h.Schema != h.Latest {
			t.Errorf("Health() = %+v, want no problems and schema at the latest version", h)
		}
		server := strings.HasPrefix(s.Path(), "postgres")
		if skew := time.Since(h.ServerTime).Abs(); server && skew > time.Minute {
			t.Errorf("Health().ServerTime = %v, %v from this host's clock", h.ServerTime, skew)
		}
		if !server && !h.ServerTime.IsZero() {
			t.Errorf("Health().ServerTime = %v for an embedded database, want zero", h.ServerTime)
		}
	})
}

// DueSince names, per queue, when the job the claim takes next became due:
// not a job scheduled later, nor one waiting for another, nor a queue with
// nothing due.
func TestDueSince(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := context.Background()
		s.Now = func() time.Time { return t0 }
		first := mustEnqueue(t, s, claim.NewJob{ID: "a1", Command: "true", Queue: "a", RunAt: t0.Add(-10 * time.Minute)})
		mustEnqueue(t, s, claim.NewJob{ID: "a2", Command: "true", Queue: "a", RunAt: t0.Add(-time.Minute)})
		mustEnqueue(t, s, claim.NewJob{ID: "a3", Command: "true", Queue: "a", RunAt: t0.Add(-time.Hour), After: []string{"a1"}})
		mustEnqueue(t, s, claim.NewJob{ID: "later", Command: "true", Queue: "b", RunAt: t0.Add(time.Hour)})
		s.Now = func() time.Time { return t0.Add(5 * time.Minute) }
		due, err := s.DueSince(ctx)
		if err != nil {
			t.Fatalf("DueSince() = %v", err)
		}
		if len(due) != 1 || !due["a"].Equal(first.RunAfter) {
			t.Errorf("DueSince() = %v, want only queue a, due since %v (job a1)", due, first.RunAfter)
		}
	})
}

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

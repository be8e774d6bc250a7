package claim_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// Existing tells which ids name a job, removed ones not, in one call of the
// engine however many ids are asked: a worker asks it of every job
// directory in its logs/.
func TestExisting(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, e := db.openCounted(t)
		kept := mustEnqueue(t, s, claim.NewJob{ID: "kept", Command: "true"}).ID
		mustEnqueue(t, s, claim.NewJob{ID: "removed", Command: "true"})
		mustCancel(t, s, "removed")
		if err := s.Remove(ctx, "removed"); err != nil {
			t.Fatal(err)
		}
		other := mustEnqueue(t, s, claim.NewJob{Command: "true"}).ID

		asked := []string{kept, "removed", "never", other, kept}
		for i := range 5000 {
			asked = append(asked, fmt.Sprintf("missing-%d", i))
		}
		e.Calls("GetAll")
		got, err := s.Existing(ctx, asked)
		if err != nil {
			t.Fatalf("Existing(%d ids) = %v", len(asked), err)
		}
		if ids, want := slices.Sorted(maps.Keys(got)), []string{kept, other}; !slices.Equal(ids, slices.Sorted(slices.Values(want))) {
			t.Errorf("Existing(%d ids) = %v, want %v", len(asked), ids, want)
		}
		if n := e.Calls("GetAll"); n != 1 {
			t.Errorf("Existing of %d ids called the engine %d times, want 1", len(asked), n)
		}
		if got, err := s.Existing(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("Existing(nil) = %v, %v; want none", got, err)
		}
	})
}

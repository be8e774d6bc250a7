package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// TestDurableAfterLight: the writes SPEC §6 needs on disk (an enqueue, a
// spool batch) commit at synchronous=FULL even on a connection that the
// claim side just set to NORMAL, and the claim side commits at NORMAL.
func TestDurableAfterLight(t *testing.T) {
	ctx := context.Background()
	e, err := Open(filepath.Join(t.TempDir(), "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s := claim.New(e)
	defer s.Close()
	level := func() int {
		t.Helper()
		var n int
		if err := e.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const normal, full = 1, 2
	if got := level(); got != full {
		t.Fatalf("synchronous of a new store = %d, want FULL (%d)", got, full)
	}
	c := claim.Claimant{WorkerID: "w", Host: "h", PID: 1, Lease: time.Minute, LogDir: t.TempDir()}
	steps := []struct {
		name string
		do   func() error
		want int
	}{
		{"Enqueue", func() error { _, err := s.Enqueue(ctx, claim.NewJob{Command: "true"}); return err }, full},
		{"Claim", func() error { _, _, err := s.Claim(ctx, c); return err }, normal},
		{"EnqueueEach", func() error { _, err := s.EnqueueEach(ctx, []claim.NewJob{{Command: "true"}}); return err }, full},
		{"Claim again", func() error { _, _, err := s.Claim(ctx, c); return err }, normal},
		{"EnqueueAll", func() error { _, err := s.EnqueueAll(ctx, []claim.NewJob{{Command: "true"}}); return err }, full},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := level(); got != st.want {
			t.Errorf("synchronous after %s = %d, want %d", st.name, got, st.want)
		}
	}
}

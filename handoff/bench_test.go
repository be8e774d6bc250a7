package handoff

import (
	"context"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// BenchmarkEnqueue: one client at a time, as `make` runs enqueue, against a
// served store (the socket, both JSON lines, the group commit and its
// fsync), beside the store's own commit of one job (what the worker does
// for it).
func BenchmarkEnqueue(b *testing.B) {
	b.Run("socket", func(b *testing.B) {
		s := mustOpenStore(b)
		path, _ := serve(b, s)
		for b.Loop() {
			if _, err := Enqueue(path, s.Path(), claim.NewJob{ID: claim.NewID(s.Now()), Command: "true"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("store", func(b *testing.B) {
		s := mustOpenStore(b)
		for b.Loop() {
			if _, err := s.EnqueueEach(context.Background(), []claim.NewJob{{Command: "true"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package sqlite_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// BenchmarkClaimBesideBacklog claims and completes jobs of one queue while
// 200,000 jobs wait that the claimant may not take: in another queue (a
// worker started with --queue) or in a paused queue. The claim reads each
// runnable queue's first job only, so the backlog should cost it nothing:
// compare with the "none" case of the same run.
func BenchmarkClaimBesideBacklog(b *testing.B) {
	for _, backlog := range []string{"none", "other queue", "paused queue"} {
		b.Run(backlog, func(b *testing.B) {
			ctx := context.Background()
			s := mustOpenPath(b, filepath.Join(b.TempDir(), "queue.db"))
			if backlog != "none" {
				fill(b, s, "backlog", 200_000)
			}
			if backlog == "paused queue" {
				if err := s.Pause(ctx, "backlog"); err != nil {
					b.Fatal(err)
				}
			}
			fill(b, s, "mine", b.N)
			c := claim.Claimant{WorkerID: "w", Host: "h", PID: 1, Lease: time.Minute}
			if backlog == "other queue" {
				c.Queues = []string{"mine"}
			}
			b.ResetTimer()
			for range b.N {
				_, r, err := s.Claim(ctx, c)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Complete(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func fill(b *testing.B, s *claim.Store, queue string, n int) {
	b.Helper()
	for start := 0; start < n; start += 10_000 {
		jobs := make([]claim.NewJob, 0, 10_000)
		for i := start; i < min(n, start+10_000); i++ {
			jobs = append(jobs, claim.NewJob{ID: queue + "-" + strconv.Itoa(i), Command: "true", Queue: queue})
		}
		if _, err := s.EnqueueAll(context.Background(), jobs); err != nil {
			b.Fatal(err)
		}
	}
}

package claim_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// BenchmarkClaim measures one Claim plus its Complete: a job's whole trip
// through the store once it is queued.
func BenchmarkClaim(b *testing.B) {
	benchEngines(b, func(b *testing.B, db testDB) {
		s := db.open(b)
		for i := 0; i < b.N; i += 1000 {
			batch := make([]claim.NewJob, min(1000, b.N-i))
			for k := range batch {
				batch[k] = claim.NewJob{Command: "true"}
			}
			if _, err := s.EnqueueAll(b.Context(), batch); err != nil {
				b.Fatal(err)
			}
		}
		c := claimant(b, "bench")
		b.ResetTimer()
		for range b.N {
			_, r, err := s.Claim(b.Context(), c)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Complete(b.Context(), r); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if _, _, err := s.Claim(b.Context(), c); !errors.Is(err, claim.ErrNoJob) {
			b.Fatalf("after %d claims, Claim = %v, want ErrNoJob", b.N, err)
		}
	})
}

// BenchmarkEnqueue measures one durable Enqueue (one fsync'd commit).
func BenchmarkEnqueue(b *testing.B) {
	benchEngines(b, func(b *testing.B, db testDB) {
		s := db.open(b)
		for b.Loop() {
			if _, err := s.Enqueue(b.Context(), claim.NewJob{Command: "true"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEnqueueEach measures a batch of 100 jobs stored in one
// transaction, as the spool ingests a burst of files.
func BenchmarkEnqueueEach(b *testing.B) {
	benchEngines(b, func(b *testing.B, db testDB) {
		s := db.open(b)
		batch := make([]claim.NewJob, 100)
		n := 0
		for b.Loop() {
			for k := range batch {
				batch[k] = claim.NewJob{ID: fmt.Sprintf("job-%d", n), Command: "true", IngestKey: fmt.Sprintf("file-%d", n)}
				n++
			}
			rs, err := s.EnqueueEach(b.Context(), batch)
			if err != nil {
				b.Fatal(err)
			}
			if rs[99].Err != nil {
				b.Fatal(rs[99].Err)
			}
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "jobs/s")
	})
}

// BenchmarkCompleteAndClaim measures a busy slot's one write per job: the
// last job's completion and the next claim in one transaction.
func BenchmarkCompleteAndClaim(b *testing.B) {
	benchEngines(b, func(b *testing.B, db testDB) {
		s := db.open(b)
		for i := 0; i < b.N+1; i += 1000 {
			batch := make([]claim.NewJob, min(1000, b.N+1-i))
			for k := range batch {
				batch[k] = claim.NewJob{Command: "true"}
			}
			if _, err := s.EnqueueAll(b.Context(), batch); err != nil {
				b.Fatal(err)
			}
		}
		c := claimant(b, "bench")
		_, r, err := s.Claim(b.Context(), c)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, r, _, err = s.CompleteAndClaim(b.Context(), r, c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClaimWaiting measures Claim plus Complete beside 0 and 100,000
// jobs that wait for a job that never completes: a waiting job stays out
// of the claim's index, so both cost the same.
func BenchmarkClaimWaiting(b *testing.B) {
	for _, waiting := range []int{0, 100_000} {
		b.Run(fmt.Sprintf("waiting=%d", waiting), func(b *testing.B) {
			benchEngines(b, func(b *testing.B, db testDB) {
				s := db.open(b)
				// The gate is in a queue no claimant serves: it never runs.
				if _, err := s.Enqueue(b.Context(), claim.NewJob{ID: "gate", Command: "true", Queue: "held"}); err != nil {
					b.Fatal(err)
				}
				enqueueBatches(b, s, waiting, func(int) claim.NewJob {
					return claim.NewJob{Command: "true", After: []string{"gate"}}
				})
				enqueueBatches(b, s, b.N, func(int) claim.NewJob { return claim.NewJob{Command: "true"} })
				c := claimant(b, "bench")
				c.Queues = []string{"default"}
				b.ResetTimer()
				for range b.N {
					_, r, err := s.Claim(b.Context(), c)
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Complete(b.Context(), r); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if _, _, err := s.Claim(b.Context(), c); !errors.Is(err, claim.ErrNoJob) {
					b.Fatalf("after %d claims, Claim = %v, want ErrNoJob: the waiting jobs must not be claimed", b.N, err)
				}
			})
		})
	}
}

// enqueueBatches stores n jobs made by mk, 1000 to a transaction.
func enqueueBatches(b *testing.B, s *claim.Store, n int, mk func(i int) claim.NewJob) {
	for i := 0; i < n; i += 1000 {
		batch := make([]claim.NewJob, min(1000, n-i))
		for k := range batch {
			batch[k] = mk(i + k)
		}
		if _, err := s.EnqueueAll(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClaimBesideLimitedQueue measures Claim plus Complete of jobs of
// an unlimited queue, alone and beside a limited queue that is full and
// has a backlog of pending jobs ahead of them in claim order, which every
// claim passes over.
func BenchmarkClaimBesideLimitedQueue(b *testing.B) {
	for _, backlog := range []int{0, 100, 1000} {
		b.Run(fmt.Sprintf("backlog=%d", backlog), func(b *testing.B) {
			benchEngines(b, func(b *testing.B, db testDB) {
				s := db.open(b)
				if backlog > 0 {
					mustSetLimit(b, s, "heavy", 2)
					heavy := make([]claim.NewJob, backlog+2)
					for k := range heavy {
						heavy[k] = claim.NewJob{Queue: "heavy", Command: "true"}
					}
					if _, err := s.EnqueueAll(b.Context(), heavy); err != nil {
						b.Fatal(err)
					}
					other := claimant(b, "heavy-runner")
					other.Queues = []string{"heavy"}
					mustClaim(b, s, other)
					mustClaim(b, s, other) // heavy is full now
				}
				for i := 0; i < b.N; i += 1000 {
					batch := make([]claim.NewJob, min(1000, b.N-i))
					for k := range batch {
						batch[k] = claim.NewJob{Command: "true"}
					}
					if _, err := s.EnqueueAll(b.Context(), batch); err != nil {
						b.Fatal(err)
					}
				}
				c := claimant(b, "bench")
				cpu := cpuTime()
				b.ResetTimer()
				for range b.N {
					j, r, err := s.Claim(b.Context(), c)
					if err != nil {
						b.Fatal(err)
					}
					if j.Queue != "default" {
						b.Fatalf("claimed a job of queue %s, which is full", j.Queue)
					}
					if err := s.Complete(b.Context(), r); err != nil {
						b.Fatal(err)
					}
				}
				// CPU time, unlike wall time, stays put on a machine that is
				// busy with other work.
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			})
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package claim_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// BenchmarkClaim measures one Claim plus its Complete: a job's whole trip
// through the store once it is queued.
func BenchmarkClaim(b *testing.B) {
	benchEngines(b, func(b *testing.B, db testDB) {
		s := db.open(b)
		enqueueBatches(b, s, b.N, func(int) claim.NewJob { return claim.NewJob{Command: "true"} })
		c := claimant(b, "bench")
		b.ResetTimer()
		for range b.N {
			_, r, err := s.Claim(b.Context(), c)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Complete(b.Context(), r); err != nil {
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
					if _, err := s.Complete(b.Context(), r); err != nil {
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
				enqueueBatches(b, s, b.N, func(int) claim.NewJob { return claim.NewJob{Command: "true"} })
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
					if _, err := s.Complete(b.Context(), r); err != nil {
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

// BenchmarkClaimBesideBacklog measures Claim plus Complete of jobs of queue
// "mine" while 200,000 jobs wait that the claimant may not take: in another
// queue (a worker started with --queue mine) or in a paused queue. The claim
// reads each runnable queue's first job only, so the backlog should cost it
// nothing: compare with "none" of the same run.
func BenchmarkClaimBesideBacklog(b *testing.B) {
	for _, backlog := range []string{"none", "other queue", "paused queue"} {
		b.Run(backlog, func(b *testing.B) {
			benchEngines(b, func(b *testing.B, db testDB) {
				s := db.open(b)
				if backlog != "none" {
					fill(b, db, s, 200_000) // queue default
				}
				if backlog == "paused queue" {
					if err := s.Pause(b.Context(), "default"); err != nil {
						b.Fatal(err)
					}
				}
				enqueueBatches(b, s, b.N, func(int) claim.NewJob { return claim.NewJob{Queue: "mine", Command: "true"} })
				c := claimant(b, "bench")
				if backlog == "other queue" {
					c.Queues = []string{"mine"}
				}
				cpu := cpuTime()
				b.ResetTimer()
				for range b.N {
					_, r, err := s.Claim(b.Context(), c)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.Complete(b.Context(), r); err != nil {
						b.Fatal(err)
					}
				}
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

// largeEnv turns on the benchmarks at a million queued jobs, which take
// minutes to fill: QUEUECTL_BENCH_LARGE=1 go test -run '^$' -bench Claimers ./claim
const largeEnv = "QUEUECTL_BENCH_LARGE"

// queuedSizes are the queue depths the scaling benchmarks run at.
func queuedSizes(b *testing.B) []int {
	if os.Getenv(largeEnv) == "" {
		b.Log("at 1,000 queued jobs only; set " + largeEnv + "=1 for 1,000,000 as well")
		return []int{1000}
	}
	return []int{1000, 1000000}
}

// fill enqueues n jobs running true into db's store s: on SQLite in
// batches of 10,000, on PostgreSQL in one INSERT … SELECT (pgtest.Fill),
// where batches would take minutes at a million.
func fill(b *testing.B, db testDB, s *claim.Store, n int) {
	b.Helper()
	if db.engine == claim.EnginePostgres {
		pgtest.Fill(b, db.location, n, "true")
		return
	}
	for i := 0; i < n; i += 10000 {
		batch := make([]claim.NewJob, min(10000, n-i))
		for k := range batch {
			batch[k] = claim.NewJob{Command: "true"}
		}
		if _, err := s.EnqueueAll(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClaimers measures 8 worker slots of one process each claiming
// and completing jobs as fast as they can (CompleteAndClaim, as a busy
// slot does), with 1,000 and 1,000,000 jobs queued: the claim must cost
// the same at both. Each run first tops the queue up by the b.N jobs it
// will take.
func BenchmarkClaimers(b *testing.B) {
	for _, e := range testEngines {
		b.Run(e.name, func(b *testing.B) {
			for _, queued := range queuedSizes(b) {
				db := testDB{engine: e.name, location: e.create(b)}
				s := db.open(b)
				fill(b, db, s, queued)
				b.Run(fmt.Sprintf("queued=%d", queued), func(b *testing.B) {
					fill(b, db, s, b.N)
					b.ResetTimer()
					claimers(b, s, b.N)
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
				})
			}
		})
	}
}

// BenchmarkClaimersRatio is BenchmarkClaimers at 1,000 and at 1,000,000
// queued jobs in alternating rounds (5 of 2,000 jobs each, after a
// warm-up), so that a machine busy with other work slows both alike. It
// reports the median rate at each and their ratio, which must stay ≥ 0.8.
// One run takes minutes (run it with -benchtime 1x), and it needs
// QUEUECTL_BENCH_LARGE=1.
func BenchmarkClaimersRatio(b *testing.B) {
	const warm, ops, rounds = 500, 2000, 5
	if os.Getenv(largeEnv) == "" {
		b.Skip("set " + largeEnv + "=1: it fills a store with 1,000,000 jobs")
	}
	for _, e := range testEngines {
		b.Run(e.name, func(b *testing.B) {
			sizes := []int{1000, 1000000}
			stores := make([]*claim.Store, len(sizes))
			for i, queued := range sizes {
				db := testDB{engine: e.name, location: e.create(b)}
				stores[i] = db.open(b)
				fill(b, db, stores[i], queued+b.N*(warm+rounds*ops))
			}
			b.ResetTimer()
			rates := make([][]float64, len(sizes))
			for range b.N {
				for _, s := range stores {
					claimers(b, s, warm)
				}
				for range rounds {
					for i, s := range stores {
						rates[i] = append(rates[i], float64(ops)/claimers(b, s, ops).Seconds())
					}
				}
			}
			small, large := median(rates[0]), median(rates[1])
			b.ReportMetric(small, "jobs/s@1k")
			b.ReportMetric(large, "jobs/s@1M")
			b.ReportMetric(large/small, "1M/1k")
		})
	}
}

// claimers has the 8 slots of one worker (one claimant, as run.Worker's
// slots share theirs) claim and complete n jobs of s, each as fast as it
// can (CompleteAndClaim, as a busy slot does), and returns how long they
// took.
func claimers(b *testing.B, s *claim.Store, n int) time.Duration {
	const slots = 8
	var done atomic.Int64
	var wg sync.WaitGroup
	c := claimant(b, "worker")
	start := time.Now()
	for range slots {
		wg.Go(func() {
			_, r, err := s.Claim(b.Context(), c)
			for err == nil {
				if done.Add(1) > int64(n) {
					_, err = s.Complete(b.Context(), r)
					break
				}
				_, r, _, err = s.CompleteAndClaim(b.Context(), r, c)
			}
			if err != nil && !errors.Is(err, claim.ErrNoJob) {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// median is the middle of xs (sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// BenchmarkEnqueueToStart measures the time from an Enqueue's return to
// an idle slot of another Store (another process would be the same)
// claiming the job, woken by the engine's wake-ups (the wake file, NOTIFY)
// rather than by a poll (the fallback poll here is a minute). It reports
// the median and the 90th and 99th percentiles.
func BenchmarkEnqueueToStart(b *testing.B) {
	benchEngines(b, func(b *testing.B, db testDB) {
		producer, consumer := db.open(b), db.open(b)
		changes, err := consumer.Changes(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		claimed := make(chan time.Time)
		go func() {
			c := claimant(b, "idle")
			for {
				_, r, err := consumer.Claim(b.Context(), c)
				if errors.Is(err, claim.ErrNoJob) {
					select {
					case <-changes:
					case <-time.After(time.Minute):
					case <-b.Context().Done():
						return
					}
					continue
				}
				if err != nil {
					return
				}
				at := time.Now()
				consumer.Complete(b.Context(), r) //nolint:errcheck
				claimed <- at
			}
		}()
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			if _, err := producer.Enqueue(b.Context(), claim.NewJob{Command: "true"}); err != nil {
				b.Fatal(err)
			}
			enqueued := time.Now()
			lat = append(lat, (<-claimed).Sub(enqueued))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	})
}

// BenchmarkReadsAtScale measures what `status` and `list --limit 100`
// read, with 1,000 and 1,000,000 jobs in the store.
func BenchmarkReadsAtScale(b *testing.B) {
	for _, e := range testEngines {
		b.Run(e.name, func(b *testing.B) {
			for _, queued := range queuedSizes(b) {
				db := testDB{engine: e.name, location: e.create(b)}
				s := db.open(b)
				fill(b, db, s, queued)
				b.Run(fmt.Sprintf("jobs=%d/counts", queued), func(b *testing.B) {
					for b.Loop() {
						if _, err := s.Counts(b.Context()); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run(fmt.Sprintf("jobs=%d/pending_reasons", queued), func(b *testing.B) {
					for b.Loop() {
						if _, err := s.PendingCounts(b.Context()); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run(fmt.Sprintf("jobs=%d/list100", queued), func(b *testing.B) {
					for b.Loop() {
						if js, err := s.List(b.Context(), claim.Filter{Limit: 100}); err != nil || len(js) != 100 {
							b.Fatal(len(js), err)
						}
					}
				})
			}
		})
	}
}

// BenchmarkEnqueueStream measures `enqueue -`: JSON lines parsed and
// stored as they are read, in one transaction; b.N jobs.
func BenchmarkEnqueueStream(b *testing.B) {
	benchEngines(b, func(b *testing.B, db testDB) {
		s := db.open(b)
		input := bytes.Repeat([]byte(`{"command": "true"}`+"\n"), b.N)
		b.ResetTimer()
		n, err := s.EnqueueStream(b.Context(), claim.ParseStream(bytes.NewReader(input)), func([]claim.Result) error { return nil })
		if err != nil || n != b.N {
			b.Fatalf("EnqueueStream = %d, %v; want %d", n, err, b.N)
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "jobs/s")
	})
}

// Command peers measures queuectl's PostgreSQL store against River on the
// same server: River v0.51.2 running no-op jobs (a client of 1,000
// workers, FetchCooldown 1 ms) and queuectl's store-only claim and
// complete (the 8 slots of one worker, CompleteAndClaim as a busy slot
// does, through the claim package), each draining the same number of jobs,
// in alternating rounds on one scratch database, so that a busy machine
// slows both alike. It prints each round and the medians' ratio.
//
// It is a module of its own, so that River never enters queuectl's
// go.mod: run it with `.ci/peers --db URL`, or `go run . --db URL` here.
// The user of URL must be allowed to create a database; the scratch
// database is dropped at the end.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/queuectl/queuectl/claim"
	_ "github.com/queuectl/queuectl/claim/postgres"
)

func main() {
	db := flag.String("db", "", "a PostgreSQL server's URL (postgres://…); a scratch database is made there")
	jobs := flag.Int("jobs", 5000, "jobs each round drains")
	rounds := flag.Int("rounds", 3, "rounds of each")
	flag.Parse()
	if *db == "" {
		fmt.Fprintln(os.Stderr, "peers: error: --db URL is required")
		os.Exit(2)
	}
	if err := run(context.Background(), *db, *jobs, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "peers: error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, server string, jobs, rounds int) error {
	dsn, drop, err := scratchDatabase(ctx, server)
	if err != nil {
		return err
	}
	defer drop()
	riverDSN, queueDSN := withParam(dsn, "search_path", "river"), withParam(dsn, "search_path", "queuectl")
	for _, schema := range []string{"river", "queuectl"} {
		if err := exec(ctx, dsn, "CREATE SCHEMA "+schema); err != nil {
			return err
		}
	}
	rv, err := newRiverPeer(ctx, riverDSN)
	if err != nil {
		return err
	}
	defer rv.close()
	s, err := claim.Open(queueDSN)
	if err != nil {
		return err
	}
	defer s.Close()

	var riverRates, queueRates []float64
	for i := range rounds {
		d, err := rv.round(ctx, jobs)
		if err != nil {
			return fmt.Errorf("river: %w", err)
		}
		riverRates = append(riverRates, float64(jobs)/d.Seconds())
		d, err = queueRound(ctx, s, jobs)
		if err != nil {
			return fmt.Errorf("queuectl: %w", err)
		}
		queueRates = append(queueRates, float64(jobs)/d.Seconds())
		fmt.Printf("round %d: river %8.0f jobs/s   queuectl %8.0f jobs/s\n", i+1, riverRates[i], queueRates[i])
	}
	r, q := median(riverRates), median(queueRates)
	fmt.Printf("median:  river %8.0f jobs/s   queuectl %8.0f jobs/s   queuectl/river %.2f\n", r, q, q/r)
	return nil
}

// scratchDatabase creates a database of its own on server and returns its
// URL and what drops it.
func scratchDatabase(ctx context.Context, server string) (string, func(), error) {
	var b [6]byte
	rand.Read(b[:])
	name := "queuectl_peers_" + hex.EncodeToString(b[:])
	if err := exec(ctx, server, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(server)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		if err := exec(ctx, server, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			fmt.Fprintln(os.Stderr, "peers: drop the scratch database:", err)
		}
	}, nil
}

func exec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func withParam(dsn, key, value string) string {
	u, _ := url.Parse(dsn)
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// queueRound enqueues n jobs and has the 8 slots of one worker claim and
// complete them, as claim's BenchmarkClaimers does; it returns how long
// the slots took.
func queueRound(ctx context.Context, s *claim.Store, n int) (time.Duration, error) {
	batch := make([]claim.NewJob, n)
	for i := range batch {
		batch[i] = claim.NewJob{Command: "true"}
	}
	if _, err := s.EnqueueAll(ctx, batch); err != nil {
		return 0, err
	}
	logs, err := os.MkdirTemp("", "queuectl-peers-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(logs)
	c := claim.Claimant{WorkerID: "peers", Host: "peers", PID: os.Getpid(), Lease: time.Minute, LogDir: logs}
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			_, r, err := s.Claim(ctx, c)
			for err == nil {
				done.Add(1)
				_, r, _, err = s.CompleteAndClaim(ctx, r, c)
			}
			if !errors.Is(err, claim.ErrNoJob) {
				errs <- err
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	if got := done.Load(); got != int64(n) {
		return 0, fmt.Errorf("%d jobs done, want %d", got, n)
	}
	return took, nil
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// noop is River's no-op job.
type noop struct{}

func (noop) Kind() string { return "noop" }

type noopWorker struct{ river.WorkerDefaults[noop] }

func (noopWorker) Work(context.Context, *river.Job[noop]) error { return nil }

// riverPeer is River on its own schema: a new client each round.
type riverPeer struct {
	pool *pgxpool.Pool
	done int // jobs completed in the rounds before
}

func newRiverPeer(ctx context.Context, dsn string) (*riverPeer, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, err
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return &riverPeer{pool: pool}, nil
}

// round inserts n jobs, starts a client and returns how long it took to
// complete them all (their rows counted every millisecond), stopping it
// after.
func (p *riverPeer) round(ctx context.Context, n int) (time.Duration, error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{})
	client, err := river.NewClient(riverpgxv5.New(p.pool), &river.Config{
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1000}},
		Workers:       workers,
		FetchCooldown: time.Millisecond,
	})
	if err != nil {
		return 0, err
	}
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i] = river.InsertManyParams{Args: noop{}}
	}
	if _, err := client.InsertManyFast(ctx, params); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := client.Start(ctx); err != nil {
		return 0, err
	}
	defer client.Stop(ctx)
	p.done += n
	deadline := start.Add(10 * time.Minute)
	for {
		var completed int
		err := p.pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE state = 'completed'").Scan(&completed)
		if err != nil {
			return 0, err
		}
		if completed >= p.done {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d of %d jobs completed in 10 minutes", completed-(p.done-n), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func (p *riverPeer) close() { p.pool.Close() }

package claim_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// enqueueN stores n jobs job-00000 … in one transaction.
func enqueueN(tb testing.TB, s *claim.Store, n int) {
	tb.Helper()
	batch := make([]claim.NewJob, n)
	for i := range batch {
		batch[i] = claim.NewJob{ID: fmt.Sprintf("job-%05d", i), Command: "true", Priority: i % 3}
	}
	if _, err := s.EnqueueAll(context.Background(), batch); err != nil {
		tb.Fatalf("EnqueueAll(%d jobs) = %v", n, err)
	}
}

// drain claims and completes jobs as worker id until nothing is runnable,
// calling claimed for each job. It returns the first error other than
// ErrNoJob.
func drain(ctx context.Context, s *claim.Store, c claim.Claimant, claimed func(id string)) error {
	for {
		j, r, err := s.Claim(ctx, c)
		if errors.Is(err, claim.ErrNoJob) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: claim: %w", c.WorkerID, err)
		}
		if r.JobID != j.ID || j.WorkerID != c.WorkerID {
			return fmt.Errorf("%s: claimed job %s with run of %s for worker %s", c.WorkerID, j.ID, r.JobID, j.WorkerID)
		}
		claimed(j.ID)
		if _, err := s.Complete(ctx, r); err != nil {
			return fmt.Errorf("%s: complete %s: %w", c.WorkerID, j.ID, err)
		}
	}
}

// TestNoDoubleClaimGoroutines: many goroutines over several Stores (each
// with its own connections) on one database claim every job exactly once,
// and never see a busy or serialization error.
func TestNoDoubleClaimGoroutines(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		claimConcurrently(t, db, 2000, 3, 8, false, drain)
	})
}

// TestNoDoubleClaimBatches: the slots of a worker share its claimant, so
// that their claims and completions gather into one transaction, the
// claims into one statement (on PostgreSQL); over several Stores, every
// job is still claimed exactly once.
func TestNoDoubleClaimBatches(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		claimConcurrently(t, db, 2000, 3, 8, true, chain)
	})
}

// claimConcurrently enqueues jobs, runs perStore goroutines on each of
// stores Stores (each with its own connections) on db, each looping with slot,
// and checks that every job was claimed once and completed. With shared,
// the goroutines of a Store are the slots of one worker: one claimant.
func claimConcurrently(t *testing.T, db testDB, jobs, stores, perStore int, shared bool,
	slot func(ctx context.Context, s *claim.Store, c claim.Claimant, claimed func(id string)) error) {
	t.Helper()
	ctx := t.Context()
	enqueueN(t, db.open(t), jobs)

	var mu sync.Mutex
	seen := make(map[string]int, jobs)
	var wg sync.WaitGroup
	for i := range stores {
		s := db.open(t)
		worker := claimant(t, fmt.Sprintf("store%d", i))
		for g := range perStore {
			c := claimant(t, fmt.Sprintf("store%d-slot%d", i, g))
			if shared {
				c = worker
			}
			wg.Go(func() {
				err := slot(ctx, s, c, func(id string) {
					mu.Lock()
					seen[id]++
					mu.Unlock()
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	checkEachOnce(t, seen, jobs)
	counts, err := db.open(t).Counts(ctx)
	if err != nil || counts[claim.Completed] != jobs {
		t.Errorf("Counts() = %v, %v; want %d completed", counts, err, jobs)
	}
}

func checkEachOnce(t *testing.T, seen map[string]int, jobs int) {
	t.Helper()
	for i := range jobs {
		id := fmt.Sprintf("job-%05d", i)
		if n := seen[id]; n != 1 {
			t.Errorf("job %s claimed %d times, want exactly once", id, n)
		}
	}
	if len(seen) != jobs {
		t.Errorf("claimed %d distinct jobs, want %d", len(seen), jobs)
	}
}

const helperEnv = "QUEUECTL_CLAIM_TEST_HELPER_DB"

// TestHelperProcess is not a test: TestNoDoubleClaimProcesses runs the test
// binary again with it, as a worker process. It opens the store, waits for
// a byte on stdin so that all workers start together, then claims and
// completes jobs with several goroutines, printing "claimed <id>" for each.
func TestHelperProcess(t *testing.T) {
	location := os.Getenv(helperEnv)
	if location == "" {
		t.Skip("worker process for TestNoDoubleClaimProcesses")
	}
	s := mustOpenPath(t, location)
	if _, err := io.ReadFull(os.Stdin, make([]byte, 1)); err != nil {
		t.Fatalf("wait for start: %v", err)
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 4 {
		c := claimant(t, fmt.Sprintf("pid%d-slot%d", os.Getpid(), g))
		wg.Go(func() {
			err := drain(t.Context(), s, c, func(id string) {
				mu.Lock()
				fmt.Fprintf(out, "claimed %s\n", id)
				mu.Unlock()
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestNoDoubleClaimProcesses: several OS processes claim from one file;
// every job is claimed exactly once.
func TestNoDoubleClaimProcesses(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("inside a helper process")
	}
	forEachEngine(t, func(t *testing.T, db testDB) {
		const jobs, procs = 600, 3
		enqueueN(t, db.open(t), jobs)

		type proc struct {
			cmd            *exec.Cmd
			stdin          io.WriteCloser
			stdout, stderr bytes.Buffer
		}
		ps := make([]*proc, procs)
		for i := range ps {
			p := &proc{cmd: exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")}
			p.cmd.Env = append(os.Environ(), helperEnv+"="+db.location)
			p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
			var err error
			if p.stdin, err = p.cmd.StdinPipe(); err != nil {
				t.Fatal(err)
			}
			if err := p.cmd.Start(); err != nil {
				t.Fatalf("start worker process: %v", err)
			}
			ps[i] = p
		}
		for _, p := range ps { // all started: let them go together
			p.stdin.Write([]byte{'g'})
			p.stdin.Close()
		}

		seen := make(map[string]int, jobs)
		for i, p := range ps {
			if err := p.cmd.Wait(); err != nil {
				t.Errorf("worker process %d: %v\nstdout:\n%s\nstderr:\n%s", i, err, p.stdout.String(), p.stderr.String())
				continue
			}
			n := 0
			for _, line := range strings.Split(p.stdout.String(), "\n") {
				if id, ok := strings.CutPrefix(line, "claimed "); ok {
					seen[id]++
					n++
				}
			}
			t.Logf("worker process %d claimed %d jobs", i, n)
		}
		checkEachOnce(t, seen, jobs)
	})
}

// TestChanges: a commit through one Store wakes a Changes channel of
// another, and the channel closes when its context ends.
func TestChanges(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		watcher, other := db.open(t), db.open(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := watcher.Changes(ctx)
		if err != nil {
			t.Fatalf("Changes = %v", err)
		}
		wait := func(what string) {
			t.Helper()
			select {
			case <-ch:
			case <-time.After(10 * time.Second):
				t.Fatalf("no wake-up within 10s of %s", what)
			}
		}

		mustEnqueue(t, other, claim.NewJob{ID: "a", Command: "true"})
		wait("an Enqueue by another Store")

		_, r := mustClaim(t, other, claimant(t, "w"))
		if _, err := other.Complete(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		wait("a Complete by another Store")

		if _, err := other.RequestStop(t.Context()); err != nil {
			t.Fatal(err)
		}
		wait("a RequestStop by another Store")

		cancel()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case _, ok := <-ch:
				if !ok {
					return
				}
			case <-deadline:
				t.Fatal("Changes channel not closed within 10s of its context ending")
			}
		}
	})
}

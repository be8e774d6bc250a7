package claim_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// The cancel race: two OS processes, each with worker goroutines that
// claim and then complete, fail (to be retried), hand back (a hard stop) or
// stop-as-canceled their runs, a reaper goroutine that recovers runs as if
// their worker had crashed, and a canceller that cancels every even job —
// each even job is so canceled twice, once from each process. What must
// hold at the end:
//
//   - no run is claimed twice, and every run claimed is in the store;
//   - no job is lost: every job is completed, dead or canceled, and every
//     run of it has ended;
//   - every successful cancel names the job's final run count, so no run
//     started after a cancel; its job ends canceled;
//   - a job's cancels all succeed or all find it finished (completed, dead).

const raceEnv = "QUEUECTL_CANCEL_RACE_DB"

const raceJobs = 200

// jumpClock moves an hour ahead on every reading, so that backoffs and
// leases lapse at once: a failed job is claimable again on the next claim,
// and the reaper may take any run in flight for lost.
type jumpClock struct{ n atomic.Int64 }

func (c *jumpClock) Now() time.Time {
	return time.Now().Add(time.Duration(c.n.Add(1)) * time.Hour)
}

// raceParticipant is one process of the race: it writes "claim ID ATTEMPT"
// and "cancel ID RUNS STATE|conflict" lines to out.
func raceParticipant(ctx context.Context, path string, name string, out io.Writer) error {
	s, err := claim.Open(path)
	if err != nil {
		return err
	}
	defer s.Close()
	s.Now = (&jumpClock{}).Now
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	finished := func() bool {
		counts, err := s.Counts(ctx)
		return err == nil && counts[claim.Pending]+counts[claim.Failed]+counts[claim.Processing] == 0
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for slot := range 4 {
		c := claim.Claimant{WorkerID: fmt.Sprintf("%s-%d", name, slot), Host: "racehost", PID: os.Getpid(), Lease: time.Minute}
		wg.Go(func() { errs <- raceWorker(ctx, s, c, say, finished) })
	}
	wg.Go(func() {
		for _, i := range rand.Perm(raceJobs) {
			if i%2 != 0 {
				continue
			}
			id := fmt.Sprintf("job-%05d", i)
			j, _, _, err := s.Cancel(ctx, id)
			switch {
			case errors.Is(err, claim.ErrConflict):
				say("cancel %s - conflict", id)
			case err != nil:
				errs <- fmt.Errorf("cancel %s: %w", id, err)
				return
			default:
				say("cancel %s %d %s", id, j.Runs, j.State)
			}
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond) // interleave with the claims
		}
	})
	wg.Go(func() { // the reaper: recovers runs as if their worker had died
		for !finished() {
			inflight, err := s.InFlight(ctx)
			if err != nil {
				errs <- err
				return
			}
			if len(inflight) > 0 && rand.IntN(4) == 0 {
				_, err := s.Recover(ctx, inflight[rand.IntN(len(inflight))])
				if err != nil && !errors.Is(err, claim.ErrLost) {
					errs <- fmt.Errorf("recover: %w", err)
					return
				}
			}
			time.Sleep(time.Millisecond)
		}
	})
	wg.Wait()
	close(errs)
	return errors.Join(slices.Collect(func(yield func(error) bool) {
		for err := range errs {
			if err != nil && !yield(err) {
				return
			}
		}
	})...)
}

// raceWorker claims until every job is finished, ending each run one of
// the ways a worker can.
func raceWorker(ctx context.Context, s *claim.Store, c claim.Claimant, say func(string, ...any), finished func() bool) error {
	for {
		j, r, err := s.Claim(ctx, c)
		if errors.Is(err, claim.ErrNoJob) {
			if finished() {
				return nil
			}
			time.Sleep(time.Millisecond) // jobs in flight elsewhere may come back
			continue
		}
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		say("claim %s %d", j.ID, r.Attempt)
		canceled, err := s.CancelRequested(ctx, c.WorkerID)
		if err != nil {
			return err
		}
		switch {
		case slices.Contains(canceled, claim.RunID{JobID: j.ID, Attempt: r.Attempt}):
			err = s.EndCanceled(ctx, r, nil)
		case rand.IntN(10) < 4:
			_, err = s.Complete(ctx, r)
		case rand.IntN(10) < 8:
			_, err = s.Fail(ctx, j, r, nil, "boom", time.Second)
		default:
			err = s.Release(ctx, r, "hard stop")
		}
		if err != nil && !errors.Is(err, claim.ErrLost) {
			return fmt.Errorf("end run %s/%d: %w", j.ID, r.Attempt, err)
		}
	}
}

// TestCancelRaceHelper is not a test: TestCancelRaces runs the test binary
// again with it, as the second process of the race.
func TestCancelRaceHelper(t *testing.T) {
	path := os.Getenv(raceEnv)
	if path == "" {
		t.Skip("second process of TestCancelRaces")
	}
	if _, err := io.ReadFull(os.Stdin, make([]byte, 1)); err != nil {
		t.Fatalf("wait for start: %v", err)
	}
	out := bufio.NewWriter(os.Stdout)
	if err := raceParticipant(t.Context(), path, "child", out); err != nil {
		t.Fatal(err)
	}
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
}

func TestCancelRaces(t *testing.T) {
	if os.Getenv(raceEnv) != "" {
		t.Skip("inside the helper process")
	}
	path := filepath.Join(t.TempDir(), "queue.db")
	s := mustOpenPath(t, path)
	batch := make([]claim.NewJob, raceJobs)
	for i := range batch {
		batch[i] = claim.NewJob{ID: fmt.Sprintf("job-%05d", i), Command: "true", MaxRetries: intp(3)}
	}
	if _, err := s.EnqueueAll(t.Context(), batch); err != nil {
		t.Fatal(err)
	}

	child := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCancelRaceHelper$", "-test.count=1")
	child.Env = append(os.Environ(), raceEnv+"="+path)
	var childOut, childErr strings.Builder
	child.Stdout, child.Stderr = &childOut, &childErr
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var parentOut syncBuilder
	stdin.Write([]byte{'g'})
	stdin.Close()
	if err := raceParticipant(t.Context(), path, "parent", &parentOut); err != nil {
		t.Error(err)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("helper process: %v\n%s\n%s", err, childOut.String(), childErr.String())
	}

	claims := map[string]int{}       // "id attempt" → times claimed
	claimsOf := map[string]int{}     // id → runs claimed
	cancels := map[string][]string{} // id → "RUNS STATE" or "- conflict", per cancel
	for _, line := range strings.Split(parentOut.String()+childOut.String(), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "claim":
			claims[f[1]+" "+f[2]]++
			claimsOf[f[1]]++
		case len(f) == 4 && f[0] == "cancel":
			cancels[f[1]] = append(cancels[f[1]], f[2]+" "+f[3])
		}
	}
	for run, n := range claims {
		if n != 1 {
			t.Errorf("run %s claimed %d times, want once", run, n)
		}
	}
	jobs, err := s.List(t.Context(), claim.Filter{})
	if err != nil || len(jobs) != raceJobs {
		t.Fatalf("List = %d jobs, %v; want %d", len(jobs), err, raceJobs)
	}
	states := map[claim.State]int{}
	marked := 0 // cancels that found the job running
	for _, cs := range cancels {
		for _, c := range cs {
			if strings.HasSuffix(c, " processing") {
				marked++
			}
		}
	}
	for _, j := range jobs {
		states[j.State]++
		if !j.State.Finished() {
			t.Errorf("job %s is %s at the end, want completed, dead or canceled", j.ID, j.State)
		}
		if claimsOf[j.ID] != j.Runs {
			t.Errorf("job %s: %d runs in the store, %d claimed", j.ID, j.Runs, claimsOf[j.ID])
		}
		runs := mustRuns(t, s, j.ID)
		for _, r := range runs {
			if r.EndedAt.IsZero() {
				t.Errorf("job %s (%s): run %d never ended", j.ID, j.State, r.Attempt)
			}
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(j.ID, "job-"))
		got := cancels[j.ID]
		if n%2 != 0 {
			if j.State == claim.Canceled || len(got) != 0 {
				t.Errorf("job %s was never canceled but is %s (cancels %v)", j.ID, j.State, got)
			}
			continue
		}
		if len(got) != 2 {
			t.Errorf("job %s: cancels %v, want one from each process", j.ID, got)
			continue
		}
		conflicts := 0
		for _, c := range got {
			if c == "- conflict" {
				conflicts++
				continue
			}
			if runs, _ := strconv.Atoi(strings.Fields(c)[0]); runs != j.Runs {
				t.Errorf("job %s: a cancel saw %d runs, the job ended with %d: a run started after the cancel", j.ID, runs, j.Runs)
			}
		}
		switch {
		case conflicts == 0 && j.State != claim.Canceled:
			t.Errorf("job %s: canceled, but ended %s", j.ID, j.State)
		case conflicts == 2 && j.State == claim.Canceled:
			t.Errorf("job %s: cancels found it finished, but it is canceled", j.ID)
		case conflicts == 1:
			t.Errorf("job %s: one cancel succeeded, one found it finished: %v", j.ID, got)
		}
	}
	t.Logf("end states %v; %d runs; %d cancels found the job running", states, len(claims), marked)
}

// syncBuilder is a strings.Builder safe for concurrent writes.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuilder) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuilder) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

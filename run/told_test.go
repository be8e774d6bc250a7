package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// TestEndThatWentThroughUnseen: a finish whose answer is lost (the
// connection to PostgreSQL cut at COMMIT) may have committed. Its retry
// then finds the run ended, by this worker, as it ended it; the end must
// still be said and acted on: the on_dead hook, the dead/ file, the jobs
// waiting for it. Before, it was "dropped", and none of those happened.
// A run another worker took and ended lost stays dropped.
func TestEndThatWentThroughUnseen(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	dir := t.TempDir()
	w := newWorker(t, s)
	w.id, w.host = "w1", HostID()
	hooked := filepath.Join(dir, "hooked")
	w.Config.Hooks.OnDead = `echo "$QUEUECTL_JOB_ID" >> ` + hooked
	var deadFiles []string
	w.OnDead = func(_ context.Context, j claim.Job) { deadFiles = append(deadFiles, j.ID) }
	c := claim.Claimant{WorkerID: w.id, Host: w.host, PID: os.Getpid(), Lease: w.Config.Lease, LogDir: w.LogDir}
	one := 1

	enqueue(t, s, claim.NewJob{ID: "bad", Command: "exit 3", MaxRetries: &one})
	enqueue(t, s, claim.NewJob{ID: "after", Command: "true", After: []string{"bad"}})
	j, r, err := s.Claim(ctx, c)
	if err != nil || j.ID != "bad" {
		t.Fatalf("Claim = %s, %v; want job bad", j.ID, err)
	}
	three := 3
	res := result{exitCode: &three, err: "exit status 3"}
	// the first try: committed, its answer lost
	if _, err := s.Fail(ctx, j, r, res.exitCode, res.err, w.Config.MaxBackoff); err != nil {
		t.Fatal(err)
	}
	if err := w.record(ctx, j, r, res); err != nil {
		t.Fatalf("the retry of a finish that went through: record = %v, want nil", err)
	}
	w.hooks.Wait()
	// bad's, then that of the job that waited for it
	if got := readFile(t, hooked); got != "bad\nafter\n" {
		t.Errorf("on_dead hook ran for %q, want bad and after, once each", got)
	}
	if !slices.Equal(deadFiles, []string{"bad", "after"}) {
		t.Errorf("dead/ files written for %q, want bad and after", deadFiles)
	}
	if a := get(t, s, "after"); a.State != claim.Dead {
		t.Errorf("the job waiting for bad is %s, want dead", a.State)
	}

	// A run this worker lost: another took it for lost and ended it so.
	enqueue(t, s, claim.NewJob{ID: "taken", Command: "exit 3", MaxRetries: &one})
	j, r, err = s.Claim(ctx, c)
	if err != nil || j.ID != "taken" {
		t.Fatalf("Claim = %s, %v; want job taken", j.ID, err)
	}
	if _, err := s.Recover(ctx, claim.InFlight{Run: r}); err != nil {
		t.Fatal(err)
	}
	if err := w.record(ctx, j, r, res); !errors.Is(err, claim.ErrLost) {
		t.Errorf("the finish of a run another worker ended: record = %v, want ErrLost", err)
	}
	w.hooks.Wait()
	if got := readFile(t, hooked); got != "bad\nafter\n" {
		t.Errorf("on_dead hook ran for %q, want no more than before", got)
	}

	// An end that went through, but the job was retried from the dead
	// letters before the retry of the finish: the job is pending, and its
	// end is no longer this worker's to act on.
	enqueue(t, s, claim.NewJob{ID: "retried", Command: "exit 3", MaxRetries: &one, Priority: 10})
	j, r, err = s.Claim(ctx, c)
	if err != nil || j.ID != "retried" {
		t.Fatalf("Claim = %s, %v; want job retried", j.ID, err)
	}
	if _, err := s.Fail(ctx, j, r, res.exitCode, res.err, w.Config.MaxBackoff); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Retry(ctx, "retried"); err != nil {
		t.Fatal(err)
	}
	if err := w.record(ctx, j, r, res); !errors.Is(err, claim.ErrLost) {
		t.Errorf("the finish of a run whose job was retried since: record = %v, want ErrLost", err)
	}
	w.hooks.Wait()
	if got := readFile(t, hooked); got != "bad\nafter\n" || len(deadFiles) != 2 {
		t.Errorf("on_dead hook ran for %q, dead/ files for %q; want no more than before", got, deadFiles)
	}
}

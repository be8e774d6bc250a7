package run

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// The log directories of jobs removed from the store (by `rm` or `purge` on
// another host of a shared store) go, without log-retention; those of jobs
// the store has stay, and so does whatever else is in logs/.
func TestPruneRemovedLogs(t *testing.T) {
	ctx := t.Context()
	s := mustOpenStore(t)
	w := newWorker(t, s)
	for _, id := range []string{"kept", "gone", "gone-too", "gone-with-more"} {
		enqueue(t, s, claim.NewJob{ID: id, Command: "echo out; echo err >&2"})
	}
	drain(t, w)
	for _, id := range []string{"gone", "gone-too", "gone-with-more"} {
		if err := s.Remove(ctx, id); err != nil { // the store's rows only, as another host's rm
			t.Fatal(err)
		}
	}
	logs := func(id string) string { return filepath.Join(w.LogDir, id) }
	// What else logs/ may hold: a file a user put in a removed job's
	// directory, a link named as a removed job, a file named as one, a
	// directory whose name is no job id, a job's of this store not run.
	mine := filepath.Join(logs("gone-with-more"), "notes.txt")
	if err := os.WriteFile(mine, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "1.out"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, logs("link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logs("file"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(logs(".hidden"), "1.out"), 0o700); err != nil {
		t.Fatal(err)
	}
	enqueue(t, s, claim.NewJob{ID: "waiting", Command: "true", RunAt: time.Now().Add(time.Hour)})
	writeOld(t, filepath.Join(logs("waiting"), "1.out"))

	n, err := PruneRemovedLogs(ctx, s, w.LogDir)
	if err != nil || n != 2 {
		t.Fatalf("PruneRemovedLogs = %d, %v; want 2 directories removed", n, err)
	}
	for _, id := range []string{"gone", "gone-too"} {
		if exists(logs(id)) {
			t.Errorf("logs/%s of a removed job is still there", id)
		}
	}
	for _, p := range []string{filepath.Join(logs("kept"), "1.out"), filepath.Join(logs("kept"), "1.err"),
		filepath.Join(logs("waiting"), "1.out"), mine, filepath.Join(elsewhere, "1.out"), logs("file"),
		filepath.Join(logs(".hidden"), "1.out")} {
		if !exists(p) {
			t.Errorf("%s was removed; want it kept", p)
		}
	}
	if _, err := os.Lstat(logs("link")); err != nil {
		t.Errorf("the link in logs/ was touched: %v", err)
	}
	if exists(filepath.Join(logs("gone-with-more"), "1.out")) {
		t.Errorf("the removed job's log file beside a file of the user's is still there")
	}
}

// A running worker removes the logs of a job removed from the store
// meanwhile, at its next pass: every removedLogsEvery heartbeat intervals.
func TestWorkerRemovesRemovedJobsLogs(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	w.PruneRemoved = true                             // as for a shared store
	w.Config.HeartbeatInterval = 5 * time.Millisecond // a pass every 300 ms
	w.Config.Lease = time.Second
	enqueue(t, s, claim.NewJob{ID: "gone", Command: "echo out"})
	startWorker(t, w)
	waitFor(t, "the job to complete", func() bool { return get(t, s, "gone").State == claim.Completed })
	if !exists(filepath.Join(w.LogDir, "gone", "1.out")) {
		t.Fatal("the job made no log file")
	}
	if err := s.Remove(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "logs/gone to be removed", func() bool { return !exists(filepath.Join(w.LogDir, "gone")) })
}

// A worker of a store of its own (SQLite: PruneRemoved unset) leaves
// logs/ alone: a home used once with another store holds that store's
// logs too, and its own rm removes its own. The pass ends at once.
func TestRemovedLogsOnlyForASharedStore(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	enqueue(t, s, claim.NewJob{ID: "elsewhere", Command: "echo out"})
	drain(t, w)
	if err := s.Remove(t.Context(), "elsewhere"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); w.keepRemovedLogs(t.Context()) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("keepRemovedLogs runs for a worker of a store of its own")
	}
	if !exists(filepath.Join(w.LogDir, "elsewhere", "1.out")) {
		t.Error("a worker of a store of its own removed the logs of a job its store lacks")
	}
}

package run

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// log-retention removes the files of runs that ended before the cutoff and
// of jobs the store no longer has; it keeps a running attempt's files,
// recent runs' files, and anything that is not a regular log file.
func TestPruneLogs(t *testing.T) {
	ctx := context.Background()
	s := mustOpenStore(t)
	w := newWorker(t, s)
	enqueue(t, s, claim.NewJob{ID: "done", Command: "echo out; echo err >&2"})
	drain(t, w)
	runs, err := s.Runs(ctx, "done")
	if err != nil || len(runs) != 1 {
		t.Fatalf("Runs(done) = %v, %v", runs, err)
	}
	doneFiles := []string{runs[0].StdoutPath, runs[0].StderrPath}

	// A running attempt: claimed, not ended, its files written long ago.
	enqueue(t, s, claim.NewJob{ID: "running", Command: "true"})
	_, r, err := s.Claim(ctx, claim.Claimant{WorkerID: "w", Host: HostID(), PID: os.Getpid(), Lease: time.Hour, LogDir: w.LogDir})
	if err != nil {
		t.Fatal(err)
	}
	// A job removed from the store, and a link someone put in logs/.
	gone := filepath.Join(w.LogDir, "gone", "1.out")
	link := filepath.Join(w.LogDir, "link")
	for _, f := range []string{r.StdoutPath, gone} {
		writeOld(t, f)
	}
	if err := os.Symlink(filepath.Dir(gone), link); err != nil {
		t.Fatal(err)
	}
	for _, f := range doneFiles {
		writeOld(t, f)
	}

	// A cutoff before the run ended keeps its files.
	n, err := PruneLogs(ctx, s, w.LogDir, HostID(), time.Now().Add(-time.Hour))
	if err != nil || n != 1 || exists(gone) || !exists(doneFiles[0]) || !exists(r.StdoutPath) {
		t.Fatalf("PruneLogs(an hour ago) = %d, %v; gone %v, done %v, running %v; want only the removed job's file gone",
			n, err, exists(gone), exists(doneFiles[0]), exists(r.StdoutPath))
	}
	n, err = PruneLogs(ctx, s, w.LogDir, HostID(), time.Now().Add(time.Hour))
	if err != nil || n != 2 || exists(doneFiles[0]) || exists(doneFiles[1]) || exists(filepath.Dir(doneFiles[0])) {
		t.Fatalf("PruneLogs(in an hour) = %d, %v; want done's 2 files and directory gone", n, err)
	}
	if !exists(r.StdoutPath) {
		t.Errorf("the running attempt's log file was removed")
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("the link in logs/ was touched: %v", err)
	}
	// The store still has the end of the removed output.
	runs, err = s.RunsWithTails(ctx, "done")
	if err != nil || runs[0].Tails == nil || string(runs[0].Tails.Stdout.Data) != "out\n" {
		t.Errorf("kept tail after the file was removed = %+v, %v; want \"out\\n\"", runs[0].Tails, err)
	}
}

// writeOld makes path (and its directory) with a modification time a day ago.
func writeOld(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		if err := os.WriteFile(path, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Now().Add(-24 * time.Hour)
	if err := os.Chtimes(path, day, day); err != nil {
		t.Fatal(err)
	}
}

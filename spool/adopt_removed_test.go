package spool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// An ingester died after its file's job was committed and before it could
// unlink the file. The job ran, and was purged, before another ingester
// adopted the file: the file is a duplicate still, and the job does not
// come back to run a second time.
func TestAdoptedFileOfARemovedJobMakesNoJob(t *testing.T) {
	w := newWatcher(t)
	ctx := context.Background()
	deadOwner := filepath.Join(w.Dirs.Spool, ingesting, "4242-deadbeef")
	if err := os.MkdirAll(deadOwner, 0o700); err != nil {
		t.Fatal(err)
	}
	tk := taken{key: randomHex(16), name: "nightly.json"}
	if _, err := w.Store.Enqueue(ctx, claim.NewJob{ID: "nightly", Command: "echo once", IngestKey: tk.ingestKey()}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deadOwner, tk.file()), []byte(`{"id": "nightly", "command": "echo once"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, r, err := w.Store.Claim(ctx, claim.Claimant{WorkerID: "w", Host: "h", PID: os.Getpid(), Lease: time.Minute, LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Store.Complete(ctx, r); err != nil {
		t.Fatal(err)
	}
	if ids, err := w.Store.PurgeFinished(ctx, claim.Completed, time.Now().Add(time.Hour)); err != nil || len(ids) != 1 {
		t.Fatalf("purge = %v, %v; want [nightly]", ids, err)
	}
	st, err := w.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if j, err := w.Store.Get(ctx, "nightly"); !errors.Is(err, claim.ErrNotFound) {
		t.Errorf("the purged job is back, %s (pass: %+v): it would run again", j.State, st)
	}
	if st.Ingested != 0 || st.Duplicates != 1 {
		t.Errorf("pass = %+v, want the adopted file a duplicate", st)
	}
	if left, _ := filepath.Glob(filepath.Join(w.Dirs.Spool, ingesting, "*", "*")); len(left) != 0 {
		t.Errorf("files left in %s: %v", ingesting, left)
	}
}

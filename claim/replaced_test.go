package claim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// A store whose file is deleted or replaced under it refuses to write on
// to the old file, where no other process would ever see the writes.
func TestWriteRefusedWhenFileReplaced(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "queue.db")
	s := mustOpenPath(t, path)
	if _, err := s.Enqueue(ctx, claim.NewJob{ID: "before", Command: "true"}); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	if err := s.CheckFile(); !errors.Is(err, claim.ErrReplaced) {
		t.Errorf("CheckFile() after the file was deleted = %v, want ErrReplaced", err)
	}
	if _, err := s.Enqueue(ctx, claim.NewJob{ID: "lost", Command: "true"}); !errors.Is(err, claim.ErrReplaced) {
		t.Errorf("Enqueue after the file was deleted = %v, want ErrReplaced", err)
	}

	fresh := mustOpenPath(t, path)
	if err := fresh.CheckFile(); err != nil {
		t.Errorf("CheckFile() of the new file = %v", err)
	}
	if _, err := s.Enqueue(ctx, claim.NewJob{ID: "still-lost", Command: "true"}); !errors.Is(err, claim.ErrReplaced) {
		t.Errorf("Enqueue through the old store after a new file appeared = %v, want ErrReplaced", err)
	}
	if _, err := fresh.Enqueue(ctx, claim.NewJob{ID: "after", Command: "true"}); err != nil {
		t.Fatal(err)
	}
	jobs, err := fresh.List(ctx, claim.Filter{})
	if err != nil || len(jobs) != 1 || jobs[0].ID != "after" {
		t.Errorf("the new file holds %v (%v), want only job after", jobs, err)
	}
}

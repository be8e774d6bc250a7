package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A worker whose database file is deleted, and recreated by another
// command, ends with ErrReplaced instead of spinning on I/O errors, however
// idle it is and whether or not the WAL and SHM went with the file.
func TestWorkerEndsWhenStoreReplaced(t *testing.T) {
	for _, tc := range []struct {
		name    string
		removed []string
	}{
		{"database only", []string{""}},
		{"database, WAL and SHM", []string{"", "-wal", "-shm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "queue.db")
			s, err := claim.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			w := newWorker(t, s)
			w.Drain = false
			w.Config.HeartbeatInterval = time.Hour // only the file check may notice
			w.Config.Lease = 2 * time.Hour
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx, ctx) }()
			enqueue(t, s, claim.NewJob{ID: "before", Command: "true"})
			waitFor(t, "job before to complete", func() bool { return get(t, s, "before").State == claim.Completed })

			for _, suffix := range tc.removed {
				if err := os.Remove(path + suffix); err != nil {
					t.Fatal(err)
				}
			}
			fresh, err := claim.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			enqueue(t, fresh, claim.NewJob{ID: "after", Command: "true"})
			select {
			case err := <-done:
				if !errors.Is(err, claim.ErrReplaced) {
					t.Errorf("Run = %v, want ErrReplaced", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the worker went on after its database file was deleted and recreated")
			}
			if j, err := fresh.Get(context.Background(), "after"); err != nil || j.State != claim.Pending {
				t.Errorf("job after in the new file: %v, %v; want it pending, untouched by the old worker", j.State, err)
			}
		})
	}
}

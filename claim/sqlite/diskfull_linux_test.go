package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/testenv"
)

// A write to a full disk fails with ErrDiskFull naming the directory, not
// SQLite's "disk I/O error", and works again once there is room.
func TestDiskFullIsNamed(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m,mode=0700"); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs here (%v); run as root to test a full disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	s := mustOpenPath(t, filepath.Join(dir, "queue.db"))
	mustEnqueue(t, s, claim.NewJob{ID: "first", Command: "true"})

	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			break
		}
	}
	f.Close()
	ctx := context.Background()
	for i := 0; ; i++ {
		_, err := s.Enqueue(ctx, claim.NewJob{Command: strings.Repeat("x", 4000)})
		if err == nil {
			if i > 1000 {
				t.Fatal("the full disk took 1000 more jobs")
			}
			continue
		}
		if !errors.Is(err, claim.ErrDiskFull) || !strings.Contains(err.Error(), "disk full: "+dir) {
			t.Errorf("Enqueue on a full disk = %v, want ErrDiskFull naming %s", err, dir)
		}
		break
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, s, claim.NewJob{ID: "after", Command: "true"})
}

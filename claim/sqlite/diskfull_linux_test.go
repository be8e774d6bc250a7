package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	if err := s.Full(); err != nil {
		t.Errorf("Full with room = %v, want nil", err)
	}

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
	// A reader learns it without a write, in the words of the write.
	if err := s.Full(); !errors.Is(err, claim.ErrDiskFull) || !strings.Contains(err.Error(), "disk full: "+dir+" (no space left for queue.db") {
		t.Errorf("Full on a full disk = %v, want ErrDiskFull naming %s", err, dir)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := s.Full(); err != nil {
		t.Errorf("Full with room again = %v, want nil", err)
	}
	mustEnqueue(t, s, claim.NewJob{ID: "after", Command: "true"})
}

// A store no process has open has no shared-memory index beside it, and
// SQLite cannot make one on a full disk: reading it must still work (status,
// list, show, logs), and a write says the disk is full.
func TestDiskFullStoreStillReads(t *testing.T) {
	dir := mountTmpfs(t, "size=4m,mode=0700")
	path := filepath.Join(dir, "queue.db")
	s, err := claim.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, s, claim.NewJob{ID: "kept", Command: "true"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-shm"); err == nil {
		t.Fatalf("%s-shm is still there once the last process closed the store", path)
	}
	fill(t, filepath.Join(dir, "filler"))

	s, err = claim.Open(path)
	if err != nil {
		t.Fatalf("Open on a full disk = %v, want the store opened to read", err)
	}
	defer s.Close()
	ctx := context.Background()
	if j, err := s.Get(ctx, "kept"); err != nil || j.ID != "kept" {
		t.Errorf("Get(kept) on a full disk = %v, %v, want the job", j.ID, err)
	}
	if _, err := s.Enqueue(ctx, claim.NewJob{Command: "true"}); !errors.Is(err, claim.ErrDiskFull) || !strings.Contains(err.Error(), "disk full: "+dir) {
		t.Errorf("Enqueue on a full disk = %v, want ErrDiskFull naming %s", err, dir)
	}
}

// mountTmpfs mounts a tmpfs with opts on a new temporary directory, or
// skips the test where that takes root.
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs here (%v); run as root to test a full disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes path until the file system holding it has no space left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			return
		}
	}
}

// A backup to a full disk says so and names where, and leaves no file.
func TestBackupToFullDisk(t *testing.T) {
	s := mustOpenPath(t, filepath.Join(t.TempDir(), "queue.db"))
	for i := range 50 {
		mustEnqueue(t, s, claim.NewJob{ID: fmt.Sprintf("job%d", i), Command: strings.Repeat("x", 4000)})
	}
	dir := mountTmpfs(t, "size=4m,mode=0700")
	fill(t, filepath.Join(dir, "filler"))
	// Room for part of the copy, which the backup removes when it fails.
	fi, err := os.Stat(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "filler"), fi.Size()-64<<10); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(dir, "backup.db")
	err = s.Backup(context.Background(), to)
	if !errors.Is(err, claim.ErrDiskFull) || !strings.Contains(err.Error(), "disk full: "+dir) {
		t.Errorf("Backup to a full disk = %v, want ErrDiskFull naming %s", err, dir)
	}
	if _, err := os.Lstat(to); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Backup to a full disk left %s (%v)", to, err)
	}
}

// A file system out of inodes, where SQLite cannot create the WAL, is
// named as full too, not "unable to open database file".
func TestNoInodesIsNamed(t *testing.T) {
	dir := mountTmpfs(t, "size=16m,nr_inodes=64,mode=0700")
	path := filepath.Join(dir, "queue.db")
	s, err := claim.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, s, claim.NewJob{ID: "kept", Command: "true"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if err := os.Mkdir(filepath.Join(dir, fmt.Sprint("d", i)), 0o700); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	_, err = claim.Open(path)
	if !errors.Is(err, claim.ErrDiskFull) || !strings.Contains(err.Error(), "disk full: "+dir) || !strings.Contains(err.Error(), "inodes") {
		t.Errorf("Open with no inodes left = %v, want ErrDiskFull naming %s and inodes", err, dir)
	}
}

// A store on a file system mounted read-only can still be read (status,
// list, show, logs), and a write names the read-only file system.
func TestReadOnlyFileSystemStillReads(t *testing.T) {
	dir := mountTmpfs(t, "size=4m,mode=0700")
	path := filepath.Join(dir, "queue.db")
	s, err := claim.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, s, claim.NewJob{ID: "kept", Command: "true"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", dir, err)
	}
	s, err = claim.Open(path)
	if err != nil {
		t.Fatalf("Open on a read-only file system = %v, want the store opened to read", err)
	}
	defer s.Close()
	ctx := context.Background()
	if j, err := s.Get(ctx, "kept"); err != nil || j.ID != "kept" {
		t.Errorf("Get(kept) on a read-only file system = %v, %v, want the job", j.ID, err)
	}
	if _, err := s.Enqueue(ctx, claim.NewJob{Command: "true"}); err == nil || !strings.Contains(err.Error(), "read-only file system: "+dir) {
		t.Errorf("Enqueue on a read-only file system = %v, want an error naming the read-only %s", err, dir)
	}
}

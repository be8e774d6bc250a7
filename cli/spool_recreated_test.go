package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A spool directory removed and made again, or moved away, under a running
// worker: the worker says so and ingests what is dropped into the
// directory now at the path (real fsnotify, real worker).
func TestSpoolRecreatedUnderWorker(t *testing.T) {
	for _, how := range []string{"rm and mkdir", "mv away"} {
		t.Run(how, func(t *testing.T) {
			h := newHome(t)
			w := h.start("worker", "start")
			spool := filepath.Join(h.dir, "spool")
			h.must("enqueue", "--id", "first", "--command", "true")
			h.must("wait", "--timeout", "30s", "first") // the worker, and so its watcher, is up
			if how == "rm and mkdir" {
				if err := os.RemoveAll(spool); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(spool, 0o700); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Rename(spool, spool+".old"); err != nil {
				t.Fatal(err)
			}
			// mv away leaves no spool until the worker makes one.
			waitFor(t, 30*time.Second, "a spool directory at the path", func() bool {
				fi, err := os.Stat(spool)
				return err == nil && fi.IsDir()
			})
			dropJob(t, spool, "second")
			h.waitJob("second")
			h.must("wait", "--timeout", "30s", "first", "second")
			if !strings.Contains(w.stderr.String(), "was removed or replaced; ingesting from the directory now there") {
				t.Errorf("the worker did not say the spool was re-created:\n%s", w.stderr)
			}
		})
	}
}

// A spool replaced by a symbolic link under a running worker is unsafe:
// the worker says so and status shows it, until a directory is back.
func TestSpoolReplacedBySymlink(t *testing.T) {
	h := newHome(t)
	w := h.start("worker", "start")
	spool := filepath.Join(h.dir, "spool")
	h.must("enqueue", "--id", "first", "--command", "true")
	h.must("wait", "--timeout", "30s", "first")
	elsewhere := t.TempDir()
	if err := os.Rename(spool, spool+".old"); err != nil {
		t.Fatal(err)
	}
	// The worker may make a new spool before the link is there: the link
	// replaces it.
	waitFor(t, 30*time.Second, "a symbolic link in place of the spool", func() bool {
		os.RemoveAll(spool)
		return os.Symlink(elsewhere, spool) == nil
	})
	waitFor(t, 30*time.Second, "the worker to say the spool is unsafe", func() bool {
		return strings.Contains(w.stderr.String(), "is a symbolic link")
	})
	if out := h.must("status"); !strings.Contains(out, "spool unsafe: it is a symbolic link") {
		t.Errorf("status with a symlinked spool:\n%s\nwant a line saying why", out)
	}
	if err := os.Remove(spool); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(spool, 0o700); err != nil && !os.IsExist(err) {
		t.Fatal(err) // (the worker may have made it first)
	}
	dropJob(t, spool, "second")
	h.waitJob("second")
	// An info line, such as this one, is written within flushDelay.
	waitReport(t, 30*time.Second, "the worker to say the spool is safe again", func() bool {
		return strings.Contains(w.stderr.String(), "is safe again")
	}, w.stderr.String)
}

// dropJob writes a job file for id into dir as writers should: .tmp, then
// rename.
func dropJob(t *testing.T, dir, id string) {
	t.Helper()
	path := filepath.Join(dir, id+".json")
	if err := os.WriteFile(path+".tmp", []byte(`{"id": "`+id+`", "command": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

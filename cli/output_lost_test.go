package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOutputLostIsRecorded: a job whose output fills the disk of logs/
// still completes (it ran), and its run says the log was cut, in show and
// in the worker's lines.
func TestOutputLostIsRecorded(t *testing.T) {
	h := newHome(t)
	h.must("status") // makes the home
	logs := filepath.Join(h.dir, "logs")
	if err := syscall.Mount("tmpfs", logs, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot mount a tmpfs (%v): CI runs as root, so it must", err)
		}
		t.Skipf("skipped: cannot mount a tmpfs here (%v); run as root (CAP_SYS_ADMIN) to test a full disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(logs, syscall.MNT_DETACH) })
	h.must("enqueue", "--id", "big", "--command", "head -c 3000000 /dev/zero")
	w := h.start("worker", "start", "--drain")
	if code := w.exit(t, 60*time.Second); code != 0 {
		t.Fatalf("worker --drain: exit %d\n%s", code, w.stderr)
	}
	var job struct {
		State string `json:"state"`
		Runs  []struct {
			Error string `json:"error"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(h.must("show", "--json", "big")), &job); err != nil {
		t.Fatal(err)
	}
	if job.State != "completed" || len(job.Runs) != 1 || !strings.Contains(job.Runs[0].Error, "no space left") {
		t.Errorf("show --json big: %+v; want completed, its run's error saying the log lost output (no space left)", job)
	}
	if text := h.must("show", "big"); !strings.Contains(text, "no space left") {
		t.Errorf("show big does not say the output was lost:\n%s", text)
	}
	if !strings.Contains(w.stderr.String(), "output lost") {
		t.Errorf("the worker did not say the output was lost:\n%s", w.stderr)
	}
}

// TestNoInodesForLogsWaits: with no inode left for a job's log files, the
// job does not run to lose its output: the worker says why, leaves the
// job pending without using an attempt, and runs it once files are freed,
// as it does on a disk without space.
func TestNoInodesForLogsWaits(t *testing.T) {
	h := newHome(t)
	h.must("status") // makes the home
	logs := filepath.Join(h.dir, "logs")
	if err := syscall.Mount("tmpfs", logs, "tmpfs", 0, "size=1m,nr_inodes=32,mode=0700"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot mount a tmpfs (%v): CI runs as root, so it must", err)
		}
		t.Skipf("skipped: cannot mount a tmpfs here (%v); run as root (CAP_SYS_ADMIN) to test a full disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(logs, syscall.MNT_DETACH) })
	filler := filepath.Join(logs, "filler")
	if err := os.Mkdir(filler, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if err := os.Mkdir(filepath.Join(filler, fmt.Sprint(i)), 0o700); err != nil {
			break
		}
	}
	h.must("enqueue", "--id", "talk", "--command", "echo said")
	w := h.start("worker", "start")
	waitFor(t, 30*time.Second, "the worker to run the job or say why not", func() bool {
		return strings.Contains(w.stderr.String(), "talk")
	})
	waitFor(t, 30*time.Second, "the worker to say the job waits for inodes", func() bool {
		return strings.Contains(w.stderr.String(), "inodes") || h.show("talk").State == "completed"
	})
	if v := h.show("talk"); v.State == "completed" || v.Attempts != 0 {
		t.Fatalf("with no inode for its logs, job talk is %s after %d attempt(s); want it waiting, no attempt used\n%s", v.State, v.Attempts, w.stderr)
	}
	if err := os.RemoveAll(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "job talk to complete", func() bool { return h.show("talk").State == "completed" })
	if out := h.must("logs", "talk"); out != "said\n" {
		t.Errorf("logs talk = %q, want %q", out, "said\n")
	}
}

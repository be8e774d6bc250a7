package cli

import (
	"encoding/json"
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

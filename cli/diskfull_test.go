package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDiskFullSaidOnce: a worker on a full disk says once that it is full
// (where, and what waits) and once that there is room again, however many
// times its slots, its heartbeat and its reaper try meanwhile, as it does
// for a store that cannot be reached.
func TestDiskFullSaidOnce(t *testing.T) {
	fs := mountTmpfs(t, "16m")
	h := &qhome{t: t, dir: filepath.Join(fs, "home")}
	h.must("config", "set", "heartbeat-interval", "200ms")
	w := h.start("worker", "start", "--count", "2")
	started := filepath.Join(t.TempDir(), "started") // off the full disk
	h.must("enqueue", "--id", "running", "--command", "touch "+started+"; sleep 1")
	waitFor(t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	filler := fill(t, fs)
	// Its heartbeat late by several intervals: leases and the job's end
	// were tried again many times on the full disk.
	waitReport(t, 30*time.Second, "doctor to find the worker's heartbeat late", func() bool {
		out, _, _ := h.run("doctor")
		return strings.Contains(out, "is late")
	}, func() string { return "worker:\n" + w.stderr.String() })
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitReport(t, 30*time.Second, "job running to complete", func() bool {
		return h.show("running").State == "completed"
	}, func() string { return "worker:\n" + w.stderr.String() })
	waitReport(t, 30*time.Second, "the worker to say there is room again", func() bool {
		return strings.Contains(w.stderr.String(), "room again on "+h.dir)
	}, func() string { return "worker:\n" + w.stderr.String() })

	var full []string
	for _, l := range strings.Split(w.stderr.String(), "\n") {
		if strings.Contains(l, "disk full") || strings.Contains(l, "no space left") || strings.Contains(l, "room again") {
			full = append(full, l)
		}
	}
	if len(full) != 2 || !strings.Contains(full[0], "disk full: "+h.dir+" ") || !strings.Contains(full[0], "wait to be recorded") ||
		!strings.Contains(full[1], "room again on "+h.dir) {
		t.Errorf("the worker said of the full disk:\n%s\nwant one line when it filled (where, and what waits) and one when there was room again", strings.Join(full, "\n"))
	}
}

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/internal/testenv"
)

// TestRunOnFullDiskSaysWhyItWaits: a job handed over by run fills the
// home's disk with its output and ends. Its end cannot be recorded until
// there is room, and run waits for it, but not silently: it says once on
// stderr why, and where, writes the end of the job's output that the log
// could not keep (the worker holds it), and once there is room exits as
// the job did.
func TestRunOnFullDiskSaysWhyItWaits(t *testing.T) {
	fs := mountTmpfs(t, "8m")
	h := &qhome{t: t, dir: filepath.Join(fs, "home")}
	h.startServing()
	r := h.start("run", "--id", "big", "--shell", "yes | head -c 12M; echo THE-END")
	report := func() string { return "run's stderr:\n" + r.stderr.String() }
	// Why it waits and what the disk lost come in two lines, one after
	// the other: wait for the second.
	waitReport(t, 60*time.Second, "run to say why it waits and what the full disk lost", func() bool {
		return strings.Contains(r.stderr.String(), "of its output to the full disk") || ended(r)
	}, report)
	errText := r.stderr.String()
	if ended(r) || strings.Count(errText, "cannot be recorded until there is room: disk full at "+h.dir) != 1 {
		t.Errorf("run's stderr: %q; want it, still running, to say once that the job's end cannot be recorded until there is room on the full disk at %s", errText, h.dir)
	}
	if !strings.Contains(errText, "of its output to the full disk") {
		t.Errorf("run's stderr: %q; want it to say how much output the full disk lost", errText)
	}
	waitReport(t, 30*time.Second, "the end of the job's output", func() bool {
		return strings.HasSuffix(r.stdout.String(), "y\nTHE-END\n")
	}, func() string {
		out := r.stdout.String()
		return "stdout ends " + strings.ReplaceAll(out[max(0, len(out)-40):], "\n", `\n`)
	})

	// Room again: the job's end is recorded, and run exits as the job did.
	if err := os.RemoveAll(filepath.Join(h.dir, "logs", "big")); err != nil {
		t.Fatal(err)
	}
	if code := r.exit(t, 60*time.Second); code != 0 {
		t.Errorf("run: exit %d once there was room, want 0 (the job's)\n%s", code, r.stderr)
	}
	if n := strings.Count(r.stdout.String(), "THE-END"); n != 1 {
		t.Errorf("run wrote the job's last line %d times, want once", n)
	}
}

// TestRunInTheStoreOnFullDiskSaysWhyItWaits: as
// TestRunOnFullDiskSaysWhyItWaits, but run follows its job in the store:
// no worker served the home's socket when it began, so no worker tells it
// that the job ended. It sees so itself (the job's processes are gone, its
// worker lives, the store's disk is full), says why it waits in the same
// words, once, and once there is room exits as the job did.
func TestRunInTheStoreOnFullDiskSaysWhyItWaits(t *testing.T) {
	fs := mountTmpfs(t, "8m")
	h := &qhome{t: t, dir: filepath.Join(fs, "home")}
	h.must("status") // makes the home
	r := h.start("run", "--id", "big", "--shell", "yes | head -c 12M; echo THE-END")
	waitReport(t, 30*time.Second, "run to store its job itself", func() bool {
		_, _, code := h.run("show", "big")
		return code == 0 || ended(r)
	}, func() string { return "run's stderr:\n" + r.stderr.String() })
	w := h.start("worker", "start", "--no-spool")
	report := func() string { return "run's stderr:\n" + r.stderr.String() + "\nworker's:\n" + w.stderr.String() }
	waitReport(t, 60*time.Second, "run to say why it waits", func() bool {
		return strings.Contains(r.stderr.String(), "cannot be recorded") || ended(r)
	}, report)
	errText := r.stderr.String()
	if ended(r) || strings.Count(errText, "cannot be recorded until there is room: disk full at "+h.dir) != 1 {
		t.Errorf("run's stderr: %q; want it, still running, to say once that the job's end cannot be recorded until there is room on the full disk at %s", errText, h.dir)
	}

	// Room again: the job's end is recorded, and run exits as the job did.
	if err := os.RemoveAll(filepath.Join(h.dir, "logs", "big")); err != nil {
		t.Fatal(err)
	}
	if code := r.exit(t, 60*time.Second); code != 0 {
		t.Errorf("run: exit %d once there was room, want 0 (the job's)\n%s", code, report())
	}
	if n := strings.Count(r.stderr.String(), "cannot be recorded"); n != 1 {
		t.Errorf("run said %d times that the job's end cannot be recorded, want once\n%s", n, r.stderr)
	}
	// The end of the output, which the full disk kept from the log, comes
	// from the store with the recorded end, said to follow a gap.
	if out := r.stdout.String(); !strings.HasSuffix(out, "y\nTHE-END\n") || strings.Count(out, "THE-END") != 1 {
		t.Errorf("run's stdout ends %q, want the job's last line once, after its output", out[max(0, len(out)-40):])
	}
	if !strings.Contains(r.stderr.String(), "of its output to the full disk") {
		t.Errorf("run's stderr: %q; want it to say how much output the full disk lost", r.stderr)
	}
}

// TestJobNotStartedOnFullLogsDiskIsNotSaidToStart: with no room for a
// job's logs the job does not run, and neither the worker nor run says
// that it started: the worker says it was not run, run that it did not
// start; it runs once there is room.
func TestJobNotStartedOnFullLogsDiskIsNotSaidToStart(t *testing.T) {
	h := newHome(t)
	h.must("status") // makes the home
	logs := filepath.Join(h.dir, "logs")
	mountTmpfsAt(t, logs, "1m")
	filler := fill(t, logs)
	w := h.startServing()
	r := h.start("run", "--id", "small", "--", "echo", "hi")
	waitReport(t, 30*time.Second, "run to say how run 1 ended", func() bool {
		return strings.Contains(r.stderr.String(), "run 1 ")
	}, func() string { return "run:\n" + r.stderr.String() + "\nworker:\n" + w.stderr.String() })
	if text := w.stderr.String(); strings.Contains(text, "job small started") || !strings.Contains(text, "job small not run: disk full") {
		t.Errorf("worker's stderr:\n%s\nwant job small not run for the full disk, and not said to start", text)
	}
	if text := r.stderr.String(); strings.Contains(text, "started") || !strings.Contains(text, "run 1 did not start (disk full: ") {
		t.Errorf("run's stderr:\n%s\nwant run 1 said not to start for the full disk, and not said to start", text)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if code := r.exit(t, 60*time.Second); code != 0 || r.stdout.String() != "hi\n" {
		t.Errorf("run: exit %d, stdout %q once there was room; want 0 and %q\n%s", code, r.stdout, "hi\n", r.stderr)
	}
}

// TestDiskFullSaidOnce: a worker on a full disk says once that it is full
// (where, and what waits) and once that there is room again, however many
// times its slots, its heartbeat and its reaper try meanwhile, as it does
// for a store that cannot be reached.
func TestDiskFullSaidOnce(t *testing.T) {
	fs := mountTmpfs(t, "16m")
	h := &qhome{t: t, dir: filepath.Join(fs, "home")}
	h.must("config", "set", "heartbeat-interval", "200ms")
	w := h.start("worker", "start", "--count", "2")
	off := t.TempDir() // off the full disk
	started, done := filepath.Join(off, "started"), filepath.Join(off, "done")
	h.must("enqueue", "--id", "running", "--command", "touch "+started+"; sleep 1; touch "+done)
	waitFor(t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	filler := fill(t, fs)
	// Its heartbeat late by several intervals, or the job's end waiting
	// for 3 s (its tries every 100 ms, doubling): leases and the job's end
	// were tried again many times on the full disk. A heartbeat may still
	// go through, into room a failed bigger commit left in the WAL.
	waitReport(t, 60*time.Second, "doctor to find the worker's heartbeat late, or the job's end to wait 3 s", func() bool {
		if fi, err := os.Stat(done); err == nil && time.Since(fi.ModTime()) > 3*time.Second && h.show("running").State == "processing" {
			return true
		}
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

// mountTmpfsAt mounts a tmpfs of the given size on dir, or skips the test
// when this process may not mount.
func mountTmpfsAt(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs here (%v); run as root (CAP_SYS_ADMIN) to test a full disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// runPaths runs test against both ways run follows its job of queue work:
// on the connection of the worker serving the home's socket (socket), and
// in the store, when that worker serves other queues only (store).
func runPaths(t *testing.T, test func(t *testing.T, h *qhome)) {
	t.Run("socket", func(t *testing.T) {
		h := newHome(t)
		h.startServing("--count", "4")
		test(t, h)
	})
	t.Run("store", func(t *testing.T) {
		h := newHome(t)
		h.startServing("--queue", "other")
		h.start("worker", "start", "--count", "4", "--queue", "work", "--no-spool")
		waitFor(t, 30*time.Second, "the worker of queue work to register", func() bool {
			out, _, _ := h.run("status")
			return strings.Contains(out, "workers: 2")
		})
		test(t, h)
	})
}

// TestRunSaysItWaitsForALimitedQueueOnceItDoes: a run whose job was not
// limited when it began (its queue was paused, and had no limit) says it
// waits for the queue once the queue's limit keeps it: the check is made
// while the job waits, not only when run begins (as when other runs take
// the queue's last slot first).
func TestRunSaysItWaitsForALimitedQueueOnceItDoes(t *testing.T) {
	runPaths(t, func(t *testing.T, h *qhome) {
		g := newGate(t)
		h.must("enqueue", "--queue", "work", "--command", g.command())
		g.waitStarted(t)
		h.must("pause", "--queue", "work")
		// The small queuectl's own flags: it follows the job itself, on
		// the worker's connection, where one serves the socket.
		r := h.start("run", "--queue", "work", "--label", "late", "--", "echo", "ran")
		paused := " (late): waits: queue work is paused\n"
		waitFor(t, 30*time.Second, "run to say the queue is paused", func() bool {
			return strings.Contains(r.stderr.String(), paused)
		})
		// Run has looked at its job: now the queue's limit keeps it.
		h.must("queue", "set", "work", "--max-running", "1")
		h.must("resume", "--queue", "work")
		waiting := " (late): waits for queue work (1/1 running)\n"
		waitReport(t, 30*time.Second, "run to say it waits for the queue", func() bool {
			return strings.Contains(r.stderr.String(), waiting)
		}, r.stderr.String)
		g.release(t)
		if code := r.exit(t, 30*time.Second); code != 0 || r.stdout.String() != "ran\n" {
			t.Fatalf("run: exit %d, stdout %q; want 0 and ran\nstderr: %s", code, r.stdout, r.stderr)
		}
		stderr := r.stderr.String()
		if strings.Count(stderr, waiting) != 1 || strings.Count(stderr, paused) != 1 {
			t.Errorf("run said the queue is paused, or full, other than once each:\n%s", stderr)
		}
	})
}

// TestRunWarnsOfAStalledJob: run says on stderr, as wait does, that its
// job cannot move for a while (scheduled past soon, or waiting on a job
// that is scheduled so or held), naming the job's label, once, and again
// when why changes; of a job due within seconds it says nothing.
func TestRunWarnsOfAStalledJob(t *testing.T) {
	runPaths(t, func(t *testing.T, h *qhome) {
		r := h.start("run", "--id", "delayed", "--queue", "work", "--delay", "1h", "--", "echo", "delayed")
		scheduled := regexp.MustCompile(`queuectl: warning: job delayed is scheduled for (\d{4}-\d\d-\d\d )?\d\d:\d\d \(in (59m|1h)\)\n`)
		waitReport(t, 30*time.Second, "run to say its job is scheduled", func() bool {
			return scheduled.MatchString(r.stderr.String())
		}, r.stderr.String)
		h.must("cancel", "delayed")
		if code := r.exit(t, 30*time.Second); code != 1 || len(scheduled.FindAllString(r.stderr.String(), -1)) != 1 {
			t.Errorf("run of a job scheduled in 1h, canceled: exit %d, want 1 and one warning\nstderr: %s", code, r.stderr)
		}

		h.must("enqueue", "--id", "later", "--queue", "work", "--delay", "1h", "--command", "true")
		r = h.start("run", "--id", "after", "--queue", "work", "--label", "cc x.o", "--after", "later", "--", "echo", "x")
		waitsScheduled := regexp.MustCompile(`queuectl: warning: job after \(cc x\.o\) waits on later, which is scheduled for .* \(in (59m|1h)\)\n`)
		waitReport(t, 30*time.Second, "run to say its job waits on a scheduled one", func() bool {
			return waitsScheduled.MatchString(r.stderr.String())
		}, r.stderr.String)
		h.must("hold", "later")
		held := "queuectl: warning: job after (cc x.o) waits on later, which is held\nqueuectl: hint: queuectl release later\n"
		waitReport(t, 30*time.Second, "run to say its job waits on a held one", func() bool {
			return strings.Contains(r.stderr.String(), held)
		}, r.stderr.String)
		h.must("edit", "later", "--run-at", time.Now().UTC().Format(time.RFC3339))
		h.must("release", "later")
		if code := r.exit(t, 30*time.Second); code != 0 || r.stdout.String() != "x\n" {
			t.Fatalf("run --after later: exit %d, stdout %q; want 0, x\nstderr: %s", code, r.stdout, r.stderr)
		}
		stderr := r.stderr.String()
		if len(waitsScheduled.FindAllString(stderr, -1)) != 1 || strings.Count(stderr, held) != 1 {
			t.Errorf("run said why its job waits other than once for each reason:\n%s", stderr)
		}

		// A job held once run follows it; through the small queuectl,
		// which follows it itself on the worker's connection.
		h.must("pause", "--queue", "work")
		r = h.start("run", "--queue", "work", "--label", "kept", "--", "echo", "kept")
		waitFor(t, 30*time.Second, "run to say its queue is paused", func() bool {
			return strings.Contains(r.stderr.String(), " (kept): waits: queue work is paused\n")
		})
		id := strings.TrimSpace(h.must("list", "--label", "kept", "--json"))
		id = regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(id)[1]
		h.must("hold", id)
		isHeld := "queuectl: warning: job " + id + " (kept) is held\nqueuectl: hint: queuectl release " + id + "\n"
		waitReport(t, 30*time.Second, "run to say its job is held", func() bool {
			return strings.Contains(r.stderr.String(), isHeld)
		}, r.stderr.String)
		h.must("release", id)
		h.must("resume", "--queue", "work")
		if code := r.exit(t, 30*time.Second); code != 0 || r.stdout.String() != "kept\n" || strings.Count(r.stderr.String(), isHeld) != 1 {
			t.Errorf("run of a job held, then released: exit %d, stdout %q; want 0, kept, one warning\nstderr: %s", code, r.stdout, r.stderr)
		}

		stdout, stderr, code := h.run("run", "--queue", "work", "--delay", "2s", "--", "echo", "soon")
		if code != 0 || stdout != "soon\n" || strings.Contains(stderr, "warning") {
			t.Errorf("run of a job due in 2s: exit %d, stdout %q; want 0, soon and no warning\nstderr: %s", code, stdout, stderr)
		}
	})
}

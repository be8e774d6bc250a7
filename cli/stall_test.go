package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// startWorker starts a worker of 2 slots and waits for it to register, so
// that what wait says is not about a missing worker.
func startWorker(h *qhome) {
	h.t.Helper()
	h.start("worker", "start", "--no-spool", "--count", "2")
	waitFor(h.t, 30*time.Second, "the worker to register", func() bool {
		out, _, _ := h.run("status")
		return strings.Contains(out, "workers: 1")
	})
}

// TestWaitWarnsOfStalledJobs: wait says once, on stderr, of each job that
// cannot move for a while, though a worker serves its queue: held (and
// the release to give), scheduled more than a minute ahead or past the
// wait's --timeout, waiting on a held job. A job due within the wait is
// not named.
func TestWaitWarnsOfStalledJobs(t *testing.T) {
	h := newHome(t)
	startWorker(h)
	h.must("enqueue", "--id", "held1", "--delay", "5m", "--command", "echo held")
	h.must("hold", "held1")
	h.must("enqueue", "--id", "waitheld", "--after", "held1", "--command", "echo wh")
	h.must("enqueue", "--id", "later1", "--delay", "10m", "--command", "true")
	h.must("enqueue", "--id", "pastwait", "--delay", "40s", "--command", "true")
	h.must("enqueue", "--id", "soon1", "--delay", "1s", "--command", "true")
	out, errText, code := h.run("wait", "held1", "waitheld", "later1", "pastwait", "soon1", "--timeout", "4s")
	if code != 124 || out != "" {
		t.Errorf("wait: exit %d, stdout %q; want 124, nothing\nstderr: %s", code, out, errText)
	}
	for _, want := range []string{
		`queuectl: warning: job held1 is held\nqueuectl: hint: queuectl release held1\n`,
		`queuectl: warning: job waitheld waits on held1, which is held\nqueuectl: hint: queuectl release held1\n`,
		`queuectl: warning: job later1 is scheduled for (\d{4}-\d\d-\d\d )?\d\d:\d\d \(in (9|10)m\)\n`,
		`queuectl: warning: job pastwait is scheduled for (\d{4}-\d\d-\d\d )?\d\d:\d\d \(in (39|40)s\)\n`,
	} {
		if n := len(regexp.MustCompile(want).FindAllString(errText, -1)); n != 1 {
			t.Errorf("wait said %q %d times, want once:\n%s", want, n, errText)
		}
	}
	if strings.Contains(errText, "soon1") || strings.Contains(errText, "no live worker") {
		t.Errorf("wait warned of a job due within it, or of the worker:\n%s", errText)
	}

	// --all too, and many at once are counted past the first few.
	for _, id := range []string{"h2", "h3", "h4"} {
		h.must("enqueue", "--id", id, "--delay", "5m", "--command", "true")
		h.must("hold", id)
	}
	_, errText, code = h.run("wait", "--all", "--timeout", "1s")
	if code != 124 || !strings.Contains(errText, "queuectl: warning: job waitheld waits on held1, which is held\n") ||
		!strings.Contains(errText, "queuectl: warning: 4 more of the jobs cannot run for a while either\n") {
		t.Errorf("wait --all: exit %d, stderr:\n%s\nwant 124, the first 3 named, 4 more counted", code, errText)
	}
}

// TestWaitWarnsOfAPausedDependency: a job of a served queue that waits on
// a job of a paused one is stalled by that pause, which wait names, with
// the resume to give, once; its dependency's own pause is said as such.
func TestWaitWarnsOfAPausedDependency(t *testing.T) {
	h := newHome(t)
	startWorker(h)
	h.must("pause", "--queue", "pq")
	h.must("enqueue", "--id", "inpq", "--queue", "pq", "--command", "true")
	h.must("enqueue", "--id", "afterpq", "--after", "inpq", "--command", "true")
	_, errText, code := h.run("wait", "afterpq", "--timeout", "2s")
	want := "queuectl: warning: job afterpq waits on inpq, whose queue pq is paused\nqueuectl: hint: queuectl resume --queue pq\n"
	if code != 124 || strings.Count(errText, want) != 1 {
		t.Errorf("wait afterpq: exit %d, stderr:\n%s\nwant 124 and once %q", code, errText, want)
	}
	h.must("resume", "--queue", "pq")
	if out, errText, code := h.run("wait", "afterpq", "--timeout", "60s"); code != 0 || strings.Contains(errText, "warning") {
		t.Errorf("wait afterpq after resume: exit %d, stdout %q, stderr:\n%s\nwant 0, no warning", code, out, errText)
	}
}

// TestLogsFollowWarnsOfStalledJob: logs -f of a job that has not started
// says why it cannot, as wait does, again when that changes, and keeps
// stdout for the job's output.
func TestLogsFollowWarnsOfStalledJob(t *testing.T) {
	h := newHome(t)
	startWorker(h)
	h.must("enqueue", "--id", "held1", "--delay", "5m", "--command", "echo held")
	h.must("hold", "held1")
	h.must("enqueue", "--id", "waitheld", "--after", "held1", "--command", "echo wh")
	p := h.start("logs", "-f", "waitheld")
	waitFor(t, 30*time.Second, "logs -f to say the job waits on a held one", func() bool {
		return strings.Contains(p.stderr.String(), "queuectl: warning: job waitheld waits on held1, which is held\n"+
			"queuectl: hint: queuectl release held1\n")
	})
	h.must("release", "held1")
	waitFor(t, 30*time.Second, "logs -f to say what holds it now", func() bool {
		return regexp.MustCompile(`queuectl: warning: job waitheld waits on held1, which is scheduled for .* \(in (4|5)m\)\n`).
			MatchString(p.stderr.String())
	})
	h.must("edit", "held1", "--run-at", time.Now().UTC().Format(time.RFC3339))
	if code := p.exit(t, 60*time.Second); code != 0 || p.stdout.String() != "wh\n" {
		t.Errorf("logs -f: exit %d, stdout %q; want 0, %q\nstderr: %s", code, p.stdout, "wh\n", p.stderr)
	}
	if n := strings.Count(p.stderr.String(), "which is held"); n != 1 {
		t.Errorf("logs -f said the job waits on a held one %d times, want once:\n%s", n, p.stderr)
	}
}

// TestLogsFollowQuietForARunnableJob: logs -f of a job that runs at once
// says nothing on stderr.
func TestLogsFollowQuietForARunnableJob(t *testing.T) {
	h := newHome(t)
	startWorker(h)
	h.must("enqueue", "--id", "first", "--delay", "2s", "--command", "echo hi")
	p := h.start("logs", "-f", "first")
	if code := p.exit(t, 60*time.Second); code != 0 || p.stdout.String() != "hi\n" || p.stderr.String() != "" {
		t.Errorf("logs -f: exit %d, stdout %q, stderr %q; want 0, %q, nothing", code, p.stdout, p.stderr, "hi\n")
	}
}

// TestWaitWarnsOfAnUnservedDependency: a job of a served queue that waits
// on a job of a queue no live worker serves (the worker runs --queue
// default) cannot move until one does; wait names that queue and the
// worker to start, once, where it said nothing and timed out.
func TestWaitWarnsOfAnUnservedDependency(t *testing.T) {
	h := newHome(t)
	h.start("worker", "start", "--no-spool", "--queue", "default")
	waitFor(t, 30*time.Second, "the worker to register", func() bool {
		out, _, _ := h.run("status")
		return strings.Contains(out, "workers: 1")
	})
	h.must("enqueue", "--id", "inother", "--queue", "other", "--command", "true")
	h.must("enqueue", "--id", "afterother", "--after", "inother", "--command", "true")
	_, errText, code := h.run("wait", "afterother", "--timeout", "2s")
	want := "queuectl: warning: job afterother waits on inother, whose queue other no live worker serves\nqueuectl: hint: queuectl worker start --queue other\n"
	if code != 124 || strings.Count(errText, want) != 1 {
		t.Errorf("wait afterother: exit %d, stderr:\n%s\nwant 124 and once %q", code, errText, want)
	}
}

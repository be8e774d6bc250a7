package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

var contentionFull = flag.Bool("contention.full", false, "contention test at full size: 20,000 jobs instead of 2,000")

// TestContention runs 8 worker processes of 8 slots each on one home while
// jobs arrive from concurrent `enqueue` processes (batches on stdin, and
// single jobs) and `status` and `list` read: every job runs exactly once,
// and no command, worker or job sees SQLITE_BUSY or "database is locked".
//
//	go test -run TestContention -contention.full -timeout 1h -v .
func TestContention(t *testing.T) { testContention(t, newHome(t)) }

// TestContentionPostgres is TestContention with the store in PostgreSQL.
func TestContentionPostgres(t *testing.T) { testContention(t, newPostgresHome(t)) }

func testContention(t *testing.T, h *qhome) {
	const procs, slots, batch, enqueuers = 8, 8, 250, 4
	jobs := 2000
	if *contentionFull {
		jobs = 20000
	}
	singles := jobs / 100
	h.must("status") // create the database before the crowd arrives
	out := filepath.Join(t.TempDir(), "out")
	command := func(i int) string { return fmt.Sprintf("echo c%05d >> %s", i, out) }
	began := time.Now()
	var workers []*proc
	for range procs {
		workers = append(workers, h.start("worker", "start", "--count", fmt.Sprint(slots), "--no-spool"))
	}

	// Batches go to up to `enqueuers` concurrent processes; between starts,
	// a single enqueue and a reader run in the test's own goroutine.
	var running []*proc
	next, single := singles, 0
	for next < jobs || len(running) > 0 {
		running = reapEnqueuers(t, running)
		if next < jobs && len(running) < enqueuers {
			var lines strings.Builder
			for i := next; i < min(next+batch, jobs); i++ {
				fmt.Fprintf(&lines, `{"id": "c%05d", "command": %q}`+"\n", i, command(i))
			}
			next = min(next+batch, jobs)
			running = append(running, h.startInput(lines.String(), "enqueue", "-q", "-"))
		}
		if single < singles {
			h.mustQuiet("enqueue", "-q", "--id", fmt.Sprintf("c%05d", single), "--command", command(single))
			single++
		}
		h.mustQuiet("status")
		h.mustQuiet("list", "--state", "processing", "--json")
	}
	for ; single < singles; single++ {
		h.mustQuiet("enqueue", "-q", "--id", fmt.Sprintf("c%05d", single), "--command", command(single))
	}
	enqueued := time.Since(began)
	waitFor(t, 30*time.Minute, fmt.Sprintf("%d jobs completed", jobs), func() bool {
		return h.queueStatus().Completed == jobs
	})
	took := time.Since(began)
	h.must("worker", "stop", "--wait", "--timeout", "2m")
	for _, w := range workers {
		if code := w.exit(t, time.Minute); code != 0 {
			t.Errorf("worker exit %d\n%s", code, w.stderr)
		}
		if s := w.stderr.String(); busy(s) {
			t.Errorf("a worker reported a busy database:\n%s", s)
		}
	}

	seen := lines(t, out)
	for i := range jobs {
		if n := seen[fmt.Sprintf("c%05d", i)]; n != 1 {
			t.Errorf("job c%05d ran %d times, want once", i, n)
		}
	}
	if len(seen) != jobs {
		t.Errorf("%d distinct jobs ran, want %d", len(seen), jobs)
	}
	s, err := claim.Open(h.location())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := s.List(context.Background(), claim.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range all {
		if j.State != claim.Completed || j.Runs != 1 || j.Attempts != 1 {
			t.Errorf("job %s: %s after %d runs (%d attempts), want completed after 1", j.ID, j.State, j.Runs, j.Attempts)
		}
	}
	if len(all) != jobs {
		t.Errorf("%d jobs stored, want %d", len(all), jobs)
	}
	t.Logf("contention: %d processes × %d slots, %d jobs (%d single enqueues, the rest in batches of %d from %d concurrent enqueuers): all enqueued after %v, all completed after %v (%.0f jobs/s); each ran once; no busy error",
		procs, slots, jobs, singles, batch, enqueuers, enqueued.Round(time.Millisecond), took.Round(time.Millisecond), float64(jobs)/took.Seconds())
}

// busy reports whether text shows SQLite's lock contention to a user.
func busy(text string) bool {
	return strings.Contains(text, "database is locked") || strings.Contains(text, "SQLITE_BUSY")
}

// reapEnqueuers checks the enqueue processes that have ended and returns
// those still running.
func reapEnqueuers(t *testing.T, ps []*proc) []*proc {
	t.Helper()
	var still []*proc
	for _, p := range ps {
		if !ended(p) {
			still = append(still, p)
			continue
		}
		if p.err != nil || p.stderr.String() != "" {
			t.Errorf("queuectl %v: %v\n%s", p.cmd.Args[1:], p.err, p.stderr)
		}
	}
	if len(still) == len(ps) && len(ps) > 0 {
		select { // nothing ended: wait a little for the first to end
		case <-ps[0].done:
		case <-time.After(50 * time.Millisecond):
		}
	}
	return still
}

// startInput starts queuectl in the background with stdin.
func (h *qhome) startInput(stdin string, args ...string) *proc {
	h.t.Helper()
	cmd := h.command(args...)
	cmd.Stdin = strings.NewReader(stdin)
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("start queuectl %v: %v", args, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	h.t.Cleanup(func() { cmd.Process.Kill(); <-p.done })
	return p
}

// mustQuiet runs queuectl and fails the test unless it exits 0 without a
// word on stderr.
func (h *qhome) mustQuiet(args ...string) {
	h.t.Helper()
	_, errText, code := h.run(args...)
	if code != 0 || errText != "" {
		h.t.Errorf("queuectl %s: exit %d, stderr %q", strings.Join(args, " "), code, errText)
	}
}

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim/sqlite/sqlitetest"
)

// TestWaitSaysNothingOfAStartingWorker: a script runs `worker start &` and
// then `wait` or `run`: the worker, not registered yet, is on its way, and
// neither may warn that no live worker serves the queue. The test holds
// the store's write lock, so the worker, which has opened the store,
// cannot register until it lets go; a wait meanwhile makes its first look
// (which checks the workers, however short its --timeout) and says nothing
// of them, and a run, which has opened the store too, waits to store its
// job. Once the lock is let go, the worker registers and runs both jobs.
func TestWaitSaysNothingOfAStartingWorker(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "soon", "--command", "true")
	unlock := sqlitetest.WriteLock(t, h.location())
	worker := h.start("worker", "start", "--no-spool")
	waitFor(t, 30*time.Second, "the worker to open the store", func() bool {
		return hasOpen(worker.cmd.Process.Pid, h.location())
	})

	_, stderr, code := h.run("wait", "soon", "--timeout", "1s")
	if code != 124 || strings.Contains(stderr, "no live worker") {
		t.Errorf("wait while the worker starts: exit %d, stderr %q; want 124 (the worker cannot run it yet), no warning", code, stderr)
	}
	r := h.start("run", "--", "true")
	waitFor(t, 30*time.Second, "run to open the store", func() bool {
		return hasOpen(r.cmd.Process.Pid, h.location())
	})
	unlock()
	_, stderr, code = h.run("wait", "soon")
	if code != 0 || stderr != "" {
		t.Errorf("wait once the worker started: exit %d, stderr %q; want 0, nothing", code, stderr)
	}
	if code := r.exit(t, 60*time.Second); code != 0 || strings.Contains(r.stderr.String(), "no live worker") {
		t.Errorf("run while the worker started: exit %d, stderr %q; want 0, no warning", code, r.stderr)
	}
	if strings.Contains(worker.stderr.String(), "error") {
		t.Errorf("worker: %s", worker.stderr)
	}
}

// hasOpen reports whether process pid has the file path open.
func hasOpen(pid int, path string) bool {
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(fds)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if to, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && to == path {
			return true
		}
	}
	return false
}

// TestEnqueueBehindALockSaysItWaits: another process holds the SQLite
// database in a write transaction. enqueue waits for it without bound, as
// it should (the job is taken once the lock goes), but says on stderr that
// it waits and what may hold it, rather than look hung.
func TestEnqueueBehindALockSaysItWaits(t *testing.T) {
	h := newHome(t)
	h.must("status")
	unlock := sqlitetest.WriteLock(t, h.location())
	e := h.start("enqueue", "--id", "behind", "--command", "true")
	waitFor(t, time.Minute, "enqueue to say it waits", func() bool {
		return strings.Contains(e.stderr.String(), "the store has not answered")
	})
	if text := e.stderr.String(); !strings.Contains(text, "write transaction") || !strings.Contains(text, "fuser "+h.location()) {
		t.Errorf("enqueue behind a lock said %q, want what may hold it and how to find who", text)
	}
	unlock()
	if code := e.exit(t, time.Minute); code != 0 {
		t.Errorf("enqueue once the lock went: exit %d, want 0\nstderr: %s", code, e.stderr)
	}
	h.must("show", "behind")
}

// TestEnqueueToABlockedWorkerSaysItWaits: a worker serves the home, and
// another process holds its store in a write transaction, so the worker's
// commit of a handed job waits. The enqueue says that the worker has not
// answered yet, and exits 0 once the lock goes and the job is stored.
func TestEnqueueToABlockedWorkerSaysItWaits(t *testing.T) {
	h := newHome(t)
	h.must("status")
	w := h.startRegistered(h.command("worker", "start", "--no-spool"))
	unlock := sqlitetest.WriteLock(t, h.location())
	e := h.start("enqueue", "--id", "behind", "--command", "true")
	waitFor(t, time.Minute, "enqueue to say it waits", func() bool {
		return strings.Contains(e.stderr.String(), "the worker has not answered")
	})
	unlock()
	if code := e.exit(t, time.Minute); code != 0 {
		t.Errorf("enqueue once the lock went: exit %d, want 0\nstderr: %s", code, e.stderr)
	}
	h.must("wait", "behind")
	w.signal(t, syscall.SIGTERM)
	w.exit(t, time.Minute)
}

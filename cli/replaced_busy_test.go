package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBusyWorkerSaysAtOnceItsDatabaseIsGone: a worker running a job when
// its database file is deleted says why it is stopping at once, not when
// the job ends; then it lets the job finish and exits 1.
func TestBusyWorkerSaysAtOnceItsDatabaseIsGone(t *testing.T) {
	h := newHome(t)
	gate := filepath.Join(t.TempDir(), "gate")
	started := filepath.Join(t.TempDir(), "started")
	h.must("enqueue", "--id", "busy", "--command", "touch "+started+"; while [ ! -e "+gate+" ]; do sleep 0.05; done")
	w := h.start("worker", "start")
	waitFor(t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	for _, name := range []string{"queue.db", "queue.db-wal", "queue.db-shm"} {
		os.Remove(filepath.Join(h.dir, name))
	}
	waitFor(t, 30*time.Second, "the worker to say its database was deleted, while the job runs", func() bool {
		return strings.Contains(w.stderr.String(), "was deleted or replaced")
	})
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := w.exit(t, 30*time.Second); code != 1 {
		t.Errorf("worker exit %d, want 1\n%s", code, w.stderr)
	}
}

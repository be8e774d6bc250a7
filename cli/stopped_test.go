package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestStoppedWorkersRunEndsWithItsLease: a worker that stops running
// (SIGSTOP here; Ctrl-Z at its terminal does the same) while its job runs
// renews no lease, and a worker of another host takes the run for lost and
// runs the job again. The first run must be gone by then: the worker's
// guard, which runs on, kills it when its lease lapses. The job holds a
// lock while it runs; the second attempt finds it free.
func TestStoppedWorkersRunEndsWithItsLease(t *testing.T) {
	h := newPostgresHome(t)
	h.must("config", "set", "heartbeat-interval", "1s")
	h.must("config", "set", "lease", "3s")
	other := newHome(t)
	other.db = h.db
	host := fmt.Sprintf("qstopped-%d", os.Getpid())
	w := other.startOnHost(host, "worker", "start", "--count", "1", "--no-spool")
	t.Cleanup(func() { w.cmd.Process.Signal(syscall.SIGCONT) })
	dir := t.TempDir()
	// Attempt 1 runs until it is killed; those after end at once. Each
	// says whether it found the lock free.
	h.must("enqueue", "--id", "held", "--max-retries", "3", "--env", "DIR="+dir, "--command",
		`echo $$ > "$DIR/pgid.$QUEUECTL_ATTEMPT"; exec 9>>"$DIR/lock"
		if flock -n 9; then echo "$QUEUECTL_ATTEMPT" >> "$DIR/alone"; else echo "$QUEUECTL_ATTEMPT" >> "$DIR/beside"; fi
		[ "$QUEUECTL_ATTEMPT" = 1 ] && exec sleep 300; true`)
	first := readPGID(t, filepath.Join(dir, "pgid.1"))
	t.Cleanup(func() { syscall.Kill(-first, syscall.SIGKILL) })
	w.signal(t, syscall.SIGSTOP)

	// This host's worker recovers the run once its lease has lapsed, and
	// runs the job again.
	h.startRegistered(h.command("worker", "start", "--count", "1", "--no-spool"))
	h.must("wait", "held", "--timeout", "1m")
	if data, err := os.ReadFile(filepath.Join(dir, "beside")); err == nil {
		t.Errorf("attempt(s) %s ran beside the stopped worker's run, which held the lock", strings.Fields(string(data)))
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "alone")); len(strings.Fields(string(data))) < 2 {
		t.Errorf("attempts that ran alone: %q; want the stopped worker's and the one after it", data)
	}
	if groupAlive(first) {
		t.Errorf("the stopped worker's run (process group %d) still runs", first)
	}
	v := h.show("held")
	if v.State != "completed" || len(v.Runs) < 2 || v.Runs[0].Outcome != "lost" {
		t.Errorf("job: %s, runs %+v; want completed, its first run lost", v.State, v.Runs)
	}
}

package cli

import (
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestStopWaitReturnsOnceTheWorkerExited: a worker leaves the store's
// registry before it has closed the store and exited, and `worker stop
// --wait` returned then: a `db restore` after it went through while the
// worker still wrote to the store. A client of the worker's socket that
// says nothing holds the worker's end after it left the registry (up to
// the socket's 10 s read deadline): stop --wait returns only once the
// process has exited.
func TestStopWaitReturnsOnceTheWorkerExited(t *testing.T) {
	h := newHome(t)
	w := h.startServing() // its socket is served once it is registered
	conn, err := net.Dial("unix", filepath.Join(h.dir, "enqueue.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h.must("worker", "stop", "--wait")
	if state := procState(w.cmd.Process.Pid); state != "" && state != "Z" {
		t.Errorf("worker stop --wait returned while the worker ran (state %s)\nworker: %s", state, w.stderr)
	}
}

// TestScaleAndStopCountOnlyLiveWorkers: a worker killed with no chance to
// stop stays registered until another worker recovers it; scale and stop
// said they reached it.
func TestScaleAndStopCountOnlyLiveWorkers(t *testing.T) {
	h := newHome(t)
	w := h.startServing() // its socket is served once it is registered
	w.signal(t, syscall.SIGKILL)
	<-w.done
	for _, args := range [][]string{{"worker", "scale", "5"}, {"worker", "stop"}} {
		out, stderr, code := h.run(args...)
		if code != 0 || out != "" || !strings.Contains(stderr, "no worker is running") {
			t.Errorf("%v with the only worker killed: exit %d, stdout %q, stderr %q; want 0 and no worker running said", args, code, out, stderr)
		}
	}
}

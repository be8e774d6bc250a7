package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCtrlZStopsRunAndItsJob: Ctrl-Z (SIGTSTP) stops run and its job's
// processes, as it would stop the command run stands in for, in both
// programs, when a worker of this host follows the job for run; fg or bg
// (SIGCONT) lets both go on, and the job ends as it would have. A run
// killed while stopped leaves its job to go on, not stopped for good.
func TestCtrlZStopsRunAndItsJob(t *testing.T) {
	h := newHome(t)
	h.startServing()
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		g, pidFile := newGate(t), filepath.Join(t.TempDir(), "pid")
		r := h.startCmd(h.commandOf(prog, "run", "--id", "z-"+prog, "--shell", "echo $$ > "+pidFile+"; "+g.command()))
		g.waitStarted(t)
		job := readPGID(t, pidFile)
		r.signal(t, syscall.SIGTSTP)
		waitFor(t, 30*time.Second, prog+" run and its job to stop", func() bool {
			return procState(r.cmd.Process.Pid) == "T" && procState(job) == "T"
		})
		r.signal(t, syscall.SIGCONT)
		waitFor(t, 30*time.Second, "the job to go on", func() bool { return procState(job) != "T" })
		g.release(t)
		if code := r.exit(t, 30*time.Second); code != 0 {
			t.Fatalf("%s run: exit %d after Ctrl-Z and fg, want 0\nstderr: %s", prog, code, r.stderr)
		}
		if got := r.stdout.String(); got != "one\ntwo\n" {
			t.Errorf("%s run: stdout %q, want %q", prog, got, "one\ntwo\n")
		}
	}

	g, pidFile := newGate(t), filepath.Join(t.TempDir(), "pid")
	r := h.start("run", "--id", "killed-stopped", "--shell", "echo $$ > "+pidFile+"; "+g.command())
	g.waitStarted(t)
	job := readPGID(t, pidFile)
	r.signal(t, syscall.SIGTSTP)
	waitFor(t, 30*time.Second, "the job to stop", func() bool { return procState(job) == "T" })
	r.signal(t, syscall.SIGKILL)
	r.exit(t, 30*time.Second)
	waitFor(t, 30*time.Second, "the job of a run killed while stopped to go on", func() bool { return procState(job) != "T" })
	g.release(t)
	h.must("wait", "--timeout", "30s", "killed-stopped")
}

// procState is the state letter of process pid in /proc ("T": stopped),
// or "" when it is gone.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if f := strings.Fields(string(b[i+1:])); i >= 0 && len(f) > 0 {
		return f[0]
	}
	return ""
}

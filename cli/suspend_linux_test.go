package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
			return procState(r.cmd.Process.Pid) == "T" && stopped(job)
		})
		r.signal(t, syscall.SIGCONT)
		waitFor(t, 30*time.Second, "the job to go on", func() bool { return !stopped(job) })
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
	waitFor(t, 30*time.Second, "the job to stop", func() bool { return stopped(job) })
	r.signal(t, syscall.SIGKILL)
	r.exit(t, 30*time.Second)
	waitFor(t, 30*time.Second, "the job of a run killed while stopped to go on", func() bool { return !stopped(job) })
	g.release(t)
	h.must("wait", "--timeout", "30s", "killed-stopped")
}

// stopped reports whether the job's shell pid is stopped: stopped itself
// ("T"), or waiting, uninterruptibly ("D"), on children that are all
// stopped. That is a shell stopped between a vfork and its child's exec
// (dash forks its commands so): the child stops before the exec the
// shell waits for, and the shell takes its own SIGSTOP only once it does.
func stopped(pid int) bool {
	switch procState(pid) {
	case "T":
		return true
	case "D":
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		children := strings.Fields(string(b))
		if err != nil || len(children) == 0 {
			return false
		}
		for _, c := range children {
			if n, err := strconv.Atoi(c); err != nil || procState(n) != "T" {
				return false
			}
		}
		return true
	}
	return false
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

package run

import (
	"os/exec"
	"syscall"
	"testing"
)

// The guard kills, once its pipe closes, the groups still listed, and no
// group that ended (its number may be another's by then).
func TestGuardKillsTheGroupsStillListed(t *testing.T) {
	group := func() *exec.Cmd {
		t.Helper()
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	live, ended := group(), group()
	g, err := startGuard()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []struct {
		pgid int
		add  bool
	}{{live.Process.Pid, true}, {ended.Process.Pid, true}, {ended.Process.Pid, false}} {
		if err := g.tell(line.pgid, line.add); err != nil {
			t.Fatal(err)
		}
	}
	g.close() // returns once the guard has killed and exited
	live.Wait()
	if ws := live.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the listed group's process: %v, want killed", live.ProcessState)
	}
	if p, ok := readProc(ended.Process.Pid); !ok || p.zombie {
		t.Errorf("the group that ended was killed too")
	}
}

// The guard is a child this process knows, not an adopted one: the end of
// every run and of every worker look for adopted children (adoptedAny).
func TestGuardIsNoAdoptedChild(t *testing.T) {
	g, err := startGuard()
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	children.mu.Lock()
	_, known := children.pids[g.cmd.Process.Pid]
	children.mu.Unlock()
	if !known {
		t.Error("the guard is not among this process's known children: adoptedAny would count it")
	}
}

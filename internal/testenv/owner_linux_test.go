package testenv

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestGone(t *testing.T) {
	if Gone(Mark()) {
		t.Errorf("Gone(Mark()) = true for this live process (%s)", Mark())
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	mark := MarkOf(cmd.Process.Pid)
	if mark == "" || Gone(mark) {
		t.Fatalf("a running child: mark %q, gone %v", mark, Gone(mark))
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !Gone(mark) {
		t.Errorf("Gone(%q) = false once the child was reaped", mark)
	}
	// The pid of this process, with another start time: a pid used again.
	if reused := strconv.Itoa(os.Getpid()) + ":0"; !Gone(reused) {
		t.Errorf("Gone(%q) = false: a pid whose start time differs was taken for its process", reused)
	}
	// A mark that does not parse (one half written) is not known to be
	// gone: what carries it is left alone.
	for _, bad := range []string{"", "x", "0:1", "-3:1", "12", "12:"} {
		if Gone(bad) {
			t.Errorf("Gone(%q) = true", bad)
		}
	}
}

// TestSweepStopsWhatADeadOwnerLeft: a process carrying the mark of an
// owner that is gone is killed; one carrying a live owner's mark, and one
// carrying none, run on.
func TestSweepStopsWhatADeadOwnerLeft(t *testing.T) {
	start := func(mark string) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, OwnerEnv+"=") })
		if mark != "" {
			cmd.Env = append(cmd.Env, OwnerEnv+"="+mark)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	orphan := start(strconv.Itoa(os.Getpid()) + ":0") // an owner gone, its pid used again
	owned := start(Mark())
	unmarked := start("")
	// sleep's environment is laid out once it has exec'd: wait for it.
	for _, cmd := range []*exec.Cmd{orphan, owned} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			env, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
			if len(env) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pid %d: no environment after 30 s", cmd.Process.Pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	stopped := sweep(os.Getpid())
	if !slices.Contains(stopped, orphan.Process.Pid) {
		t.Errorf("sweep stopped %v, not the orphan %d", stopped, orphan.Process.Pid)
	}
	done := make(chan error, 1)
	go func() { done <- orphan.Wait() }()
	select {
	case err := <-done:
		ws, _ := orphan.ProcessState.Sys().(syscall.WaitStatus)
		if err == nil || ws.Signal() != syscall.SIGKILL {
			t.Errorf("the orphan ended with %v, want SIGKILL", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the orphan still runs 30 s after the sweep")
	}
	for _, cmd := range []*exec.Cmd{owned, unmarked} {
		if slices.Contains(stopped, cmd.Process.Pid) || cmd.Process.Signal(syscall.Signal(0)) != nil {
			t.Errorf("pid %d (%v) was stopped", cmd.Process.Pid, cmd.Env[len(cmd.Env)-1])
		}
	}
}

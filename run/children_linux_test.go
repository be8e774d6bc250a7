package run

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/testenv"
)

// gone reports whether process pid has exited (or is a zombie, which holds
// nothing).
func gone(pid int) bool {
	p, ok := readProc(pid)
	return !ok || p.zombie
}

func pidIn(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// What a job leaves behind ends with its run: a `cmd &` still in its
// process group, and a setsid daemon that ignores TERM, which left the
// group and came back to the worker, its child subreaper.
func TestLeftoversStopWithTheRun(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	bg, daemon := filepath.Join(dir, "bg"), filepath.Join(dir, "daemon")
	enqueue(t, s, claim.NewJob{ID: "leaves", Command: "sleep 1000 & echo $! > " + bg +
		"; setsid sh -c 'trap \"\" TERM; echo $$ > " + daemon + ".tmp; mv " + daemon + ".tmp " + daemon + "; while :; do sleep 1; done' &" +
		" while [ ! -e " + daemon + " ]; do sleep 0.01; done"})
	w := newWorker(t, s)
	drain(t, w)
	if j := get(t, s, "leaves"); j.State != claim.Completed {
		t.Fatalf("job leaves: %s (%s), want completed", j.State, j.LastError)
	}
	for name, pid := range map[string]int{"the background job": pidIn(t, bg), "the setsid daemon": pidIn(t, daemon)} {
		if !gone(pid) {
			t.Errorf("%s (pid %d) outlived its run", name, pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// A process that left a lost run's group (a setsid daemon, gone to init
// with its worker) is found by its QUEUECTL_RUN mark and killed by the
// reaper that recovers the run.
func TestLostRunEscapeeIsKilled(t *testing.T) {
	s := mustOpenStore(t)
	leaders := lostRuns(t, s, 1)
	escapee := exec.Command("sleep", "1000")
	escapee.Env = append(os.Environ(), "QUEUECTL_RUN="+runMark("gone-worker", "lost-0", 1))
	escapee.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := escapee.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { escapee.Process.Kill(); escapee.Wait() })
	environLaidOut(t, escapee.Process.Pid)
	w := newWorker(t, s)
	w.host = HostID()
	w.id = "reaper"
	w.reapOnce(context.Background(), context.Background())
	if j := get(t, s, "lost-0"); j.State != claim.Pending {
		t.Errorf("job lost-0: %s, want pending", j.State)
	}
	leaders[0].Wait()
	if err := escapee.Wait(); err == nil {
		t.Errorf("the lost run's setsid process was not killed")
	}
}

// A child's pidfd is blocking again once awaitExit returns: os.Process
// waits on a dup of it, and a non-blocking waitid fails with EAGAIN while
// the child is not yet waitable (under strace -f, the worker died of the
// nil ProcessState that left).
func TestAwaitExitLeavesThePidfdBlocking(t *testing.T) {
	if !pidfds() {
		testenv.Missing(t, "no pidfds on this kernel (Linux 5.3 or later)")
	}
	cmd := exec.Command("/bin/sh", "-c", "true")
	if err := startChild(cmd); err != nil {
		t.Fatal(err)
	}
	children.mu.Lock()
	pidfd := children.pids[cmd.Process.Pid]
	children.mu.Unlock()
	dup, err := unix.Dup(pidfd) // shares the flags, as os.Process's does
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dup)
	if err := waitChild(cmd); err != nil {
		t.Fatal(err)
	}
	flags, err := unix.FcntlInt(uintptr(dup), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.O_NONBLOCK != 0 {
		t.Fatal("the pidfd was left non-blocking")
	}
}

// A run's recorded process group is its own unless its leader lives,
// carries no mark of the run and started after the run did: the number
// came round again, and the group is another's, which no reaper or
// restore hint may touch.
func TestOwnGroup(t *testing.T) {
	start := func(env ...string) int {
		t.Helper()
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		environLaidOut(t, cmd.Process.Pid)
		return cmd.Process.Pid
	}
	const mark = "w1:job:1"
	stranger := start()
	ours := start("QUEUECTL_RUN=" + mark)
	longAgo, now := time.Now().Add(-time.Hour), time.Now()
	for _, tt := range []struct {
		name  string
		pgid  int
		since time.Time
		want  bool
	}{
		{"a group whose unmarked leader started an hour after the run", stranger, longAgo, false},
		{"a group whose unmarked leader started with the run", stranger, now, true},
		{"a group whose leader carries the run's mark", ours, longAgo, true},
		{"a group whose leader is gone (members keep the number)", 1 << 30, longAgo, true},
	} {
		if got := ownGroup(tt.pgid, mark, tt.since); got != tt.want {
			t.Errorf("%s: ownGroup = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// environLaidOut waits until process pid's environment can be read, its
// mark with it. Start returns once the child's execve has replaced its
// memory, which may be before the new image's environment is laid out:
// /proc/PID/environ reads empty until then.
func environLaidOut(t *testing.T, pid int) {
	t.Helper()
	environ := "/proc/" + strconv.Itoa(pid) + "/environ"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(environ); len(b) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still empty after 10s", environ)
		}
	}
}

package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// The guard kills, once its pipe closes, the groups still listed, and no
// group that ended (its number may be another's by then).
func TestGuardKillsTheGroupsStillListed(t *testing.T) {
	group := func() *exec.Cmd { return sleepingGroup(t) }
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

// A run the guard holds says so; one no guard could take (the guard cannot
// start) says not, so that its start is recorded before it runs.
func TestRunStartedSaysWhetherGuarded(t *testing.T) {
	group := func() int { return sleepingGroup(t).Process.Pid }
	dropGuard := func() { // no run of this test process is live between tests
		guard.mu.Lock()
		defer guard.mu.Unlock()
		if guard.p != nil {
			guard.p.close()
			guard.p = nil
		}
	}
	dropGuard()
	defer dropGuard()
	held := group()
	if !runStarted(held, "w:held:1", nil) {
		t.Error("runStarted with a guard to tell = false, want true")
	}
	runEnded(held)

	dropGuard()
	defer func(sh string) { guardShell = sh }(guardShell)
	guardShell = filepath.Join(t.TempDir(), "no-shell")
	loose := group()
	if runStarted(loose, "w:loose:1", nil) {
		t.Error("runStarted when no guard can start = true, want false")
	}
	runEnded(loose)
}

// A run no guard holds has its start recorded before recordStart returns
// (before the job's gate opens); a guarded one's is left to its end, or to
// startRecordDelay.
func TestUnguardedRunRecordsItsStartFirst(t *testing.T) {
	defer func(d time.Duration) { startRecordDelay = d }(startRecordDelay)
	startRecordDelay = time.Hour // the guarded run's own record never comes within the test
	s := mustOpenStore(t)
	w := newWorker(t, s)
	for _, id := range []string{"loose", "held"} {
		enqueue(t, s, claim.NewJob{ID: id, Command: "true"})
	}
	c := claim.Claimant{WorkerID: "w", Host: "h", PID: os.Getpid(), Lease: time.Minute, LogDir: w.LogDir}
	for _, guarded := range []bool{false, true} {
		_, r, err := s.Claim(t.Context(), c)
		if err != nil {
			t.Fatal(err)
		}
		r.PGID, r.ExecAt = 4242, s.Now()
		rec := w.recordStart(t.Context(), r, guarded)
		runs, err := s.Runs(t.Context(), r.JobID)
		if err != nil || len(runs) != 1 || (runs[0].PGID == 4242) == guarded {
			t.Errorf("guarded %v: runs after recordStart = %+v (%v), want the start recorded only when not guarded", guarded, runs, err)
		}
		rec.stop()
	}
}

// sleepingGroup starts a sleep in a process group of its own, killed when
// the test ends.
func sleepingGroup(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

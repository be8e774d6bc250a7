package run

import (
	"fmt"
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
	g, err := startGuard(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []struct {
		pgid int
		add  bool
	}{{live.Process.Pid, true}, {ended.Process.Pid, true}, {ended.Process.Pid, false}} {
		if err := g.tell(line.pgid, line.add, time.Now().Add(time.Hour)); err != nil {
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
	g, err := startGuard(os.Getpid())
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
	if !runStarted(held, "w:held:1", nil, inAnHour) {
		t.Error("runStarted with a guard to tell = false, want true")
	}
	runEnded(held)

	dropGuard()
	defer func(sh string) { guardShell = sh }(guardShell)
	guardShell = filepath.Join(t.TempDir(), "no-shell")
	loose := group()
	if runStarted(loose, "w:loose:1", nil, inAnHour) {
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

// stoppableWorker is a process that stands in for a worker, for a guard
// of its runs (startGuard): it sleeps until the test ends, and can be
// stopped (SIGSTOP) as a worker at Ctrl-Z is.
func stoppableWorker(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGCONT); cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// inAnHour is a run's lapse an hour from now.
func inAnHour() time.Time { return time.Now().Add(time.Hour) }

// ticks waits until guard g's ticker has woken it n times more (each tick
// is a sleep of its ticker that ended), and so looked at its groups.
func ticks(t *testing.T, g *guardProc, n int) {
	t.Helper()
	sleep := func() int { // the ticker's sleep now: a grandchild of the guard, in its group
		procs := listProcs()
		for _, p := range procs {
			if p.pgrp != g.cmd.Process.Pid || p.ppid != g.cmd.Process.Pid || p.zombie {
				continue
			}
			for _, c := range procs {
				if c.ppid == p.pid && !c.zombie {
					return c.pid
				}
			}
		}
		return 0
	}
	last, seen := sleep(), 0
	waitFor(t, fmt.Sprintf("%d ticks of the guard", n), func() bool {
		if now := sleep(); now != 0 && now != last {
			last, seen = now, seen+1
		}
		return seen > n // the sleep after the nth tick's began: that tick's look is over
	})
}

// A stopped worker's runs end with their leases: the guard kills each
// group once its own lease (and guardSlack) has passed, and no other, so a
// run whose lease holds goes on. While the worker runs, the guard kills
// nothing, whatever the lapses: the worker stops its runs itself, and one
// stopped for a store it could not reach is judged lost, not failed. In
// dash, which ends a read that a signal cuts short, and in bash, which
// restarts it.
func TestGuardEndsAStoppedWorkersRunsWithTheirLeases(t *testing.T) {
	for _, sh := range []string{"/bin/sh", "/bin/bash"} {
		if _, err := os.Stat(sh); err != nil {
			t.Fatalf("%s: %v", sh, err)
		}
		t.Run(filepath.Base(sh), func(t *testing.T) {
			defer func(old string) { guardShell = old }(guardShell)
			guardShell = sh
			stoppedWorkersRunsEnd(t)
		})
	}
}

func stoppedWorkersRunsEnd(t *testing.T) {
	worker := stoppableWorker(t)
	g, err := startGuard(worker.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	lapsed, held := sleepingGroup(t), sleepingGroup(t)
	if err := g.tell(lapsed.Process.Pid, true, time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := g.tell(held.Process.Pid, true, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The worker runs: the guard looks, and leaves the lapsed group.
	ticks(t, g, 2)
	if !groupAlive(lapsed.Process.Pid) || !groupAlive(held.Process.Pid) {
		t.Fatal("the guard killed a run of a worker that runs")
	}
	// Stopped, the worker renews nothing: the lapsed group is killed at the
	// next look, the held one not.
	if err := worker.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- lapsed.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the lapsed group of a stopped worker still runs 30s on")
	}
	ticks(t, g, 2)
	if !groupAlive(held.Process.Pid) {
		t.Error("the guard killed a group whose lease holds")
	}
}

// A renewal moves a group's lapse: a group renewed before its lapse is
// not killed at the old one, even with its worker stopped; and the guard's
// end ends its ticker, and kills the group listed.
func TestGuardRenewedGroupOutlivesItsOldLapse(t *testing.T) {
	worker := stoppableWorker(t)
	g, err := startGuard(worker.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	run := sleepingGroup(t)
	if _, err := fmt.Fprintf(g.w, "+ %d %d\n= %d %d\n", run.Process.Pid, uptimeAt(time.Now().Add(-time.Second)),
		run.Process.Pid, uptimeAt(time.Now().Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	ticks(t, g, 1)
	if err := worker.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ticks(t, g, 2)
	if !groupAlive(run.Process.Pid) {
		t.Error("the guard killed a renewed group at its old lapse")
	}
	g.close()
	run.Wait()
	waitFor(t, "the guard's ticker to end with it", func() bool {
		for _, p := range listProcs() {
			if p.pgrp == g.cmd.Process.Pid && !p.zombie {
				return false
			}
		}
		return true
	})
}

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

	"golang.org/x/sys/unix"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/testenv"
)

func needCgroups(t *testing.T) {
	t.Helper()
	if cgroupBase() == "" {
		testenv.Missing(t, "no writable cgroup v2 directory here (run as root on a cgroup v2 system)")
	}
}

// slotCgroupsOf lists the cgroups of worker id's slots.
func slotCgroupsOf(id string) []string {
	dirs, _ := filepath.Glob(filepath.Join(cgroupBase(), "queuectl-"+id+"-slot*"))
	return dirs
}

// A daemon that leaves its run's process group with setpgid (not setsid:
// it stays in its run's session) and its environment (env -i, no
// QUEUECTL_RUN mark) is still in the slot's cgroup it was born in, and
// ends with its run.
func TestSetpgidDaemonEndsWithItsRun(t *testing.T) {
	needCgroups(t)
	perl := testenv.LookPath(t, "perl", "perl")
	s := mustOpenStore(t)
	daemon := filepath.Join(t.TempDir(), "daemon")
	script := `$SIG{TERM} = "IGNORE"; setpgrp(0, 0) or die; open(F, ">", "$ARGV[0].tmp") or die; print F $$; close F; rename("$ARGV[0].tmp", $ARGV[0]); sleep 1 while 1`
	enqueue(t, s, claim.NewJob{ID: "leaves", Command: "env -i " + perl + " -e '" + script + "' " + daemon + " </dev/null >/dev/null 2>&1 &" +
		" while [ ! -e " + daemon + " ]; do sleep 0.01; done"})
	w := newWorker(t, s)
	drain(t, w)
	if j := get(t, s, "leaves"); j.State != claim.Completed {
		t.Fatalf("job leaves: %s (%s), want completed", j.State, j.LastError)
	}
	pid := pidIn(t, daemon)
	defer syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "the env -i setpgid daemon to end with its run", func() bool { return gone(pid) })
	runs, err := s.Runs(t.Context(), "leaves")
	if err != nil || len(runs) != 1 || runs[0].Confined != "cgroup" {
		t.Errorf("runs = %+v, %v; want one held by a cgroup", runs, err)
	}
	if left := slotCgroupsOf(w.id); len(left) > 0 {
		t.Errorf("the stopped worker's slot cgroups are left: %v", left)
	}
}

// A slot's runs are born in its cgroup, one after the other; a run that
// leaves something behind that neither its group nor its mark catch
// (env -i setsid) has it killed with the cgroup, and the next run is born
// in a fresh one.
func TestSlotCgroupIsReusedUntilARunLeavesSomething(t *testing.T) {
	needCgroups(t)
	s := mustOpenStore(t)
	dir := t.TempDir()
	where := func(id string) string { return "grep ^0:: /proc/self/cgroup > " + filepath.Join(dir, id) }
	sleeper := filepath.Join(dir, "sleeper")
	for _, nj := range []claim.NewJob{
		{ID: "a", Command: where("a")},
		// b ends only once its sleeper has left the run's process group
		// (it writes its pid after setsid): else the group's kill at the
		// run's end could take it, and the cgroup would be empty.
		{ID: "b", Command: where("b") + "; env -i setsid sh -c 'echo $$ > " + sleeper + ".tmp; mv " + sleeper + ".tmp " + sleeper +
			"; exec sleep 300' </dev/null >/dev/null 2>&1 & while [ ! -e " + sleeper + " ]; do sleep 0.01; done"},
		{ID: "c", Command: where("c")},
		{ID: "d", Command: where("d"), Limits: claim.Limits{NoFile: 256}},
	} {
		enqueue(t, s, nj)
	}
	w := newWorker(t, s)
	w.Slots = 1
	drain(t, w)
	cg := map[string]string{}
	for _, id := range []string{"a", "b", "c", "d"} {
		line := strings.TrimSpace(readFile(t, filepath.Join(dir, id)))
		cg[id] = line[strings.LastIndexByte(line, '/')+1:]
		runs, err := s.Runs(t.Context(), id)
		want := map[bool]string{false: "cgroup", true: "cgroup+rlimit"}[id == "d"]
		if err != nil || len(runs) != 1 || runs[0].Confined != want {
			t.Errorf("job %s: runs = %+v, %v; want one held by %q", id, runs, err, want)
		}
	}
	slot := "queuectl-" + w.id + "-slot0"
	if cg["a"] != slot || cg["b"] != slot || cg["c"] != slot+".1" || cg["d"] != slot+".1" {
		t.Errorf("the runs were in cgroups %v; want a and b in %s, c and d in %s.1", cg, slot, slot)
	}
	pid := pidIn(t, sleeper)
	defer syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "the setsid sleeper to end with run b", func() bool { return gone(pid) })
	if left := slotCgroupsOf(w.id); len(left) > 0 {
		t.Errorf("the stopped worker's slot cgroups are left: %v", left)
	}
}

// The slot cgroups of a worker that was killed (its pid gone) are killed
// and removed by the next worker to start; a live worker's are left
// alone.
func TestDeadWorkersSlotCgroupsAreSwept(t *testing.T) {
	needCgroups(t)
	// No process has a pid above pid_max.
	pidMax, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	host := HostName(HostID())
	dead := filepath.Join(cgroupBase(), "queuectl-"+host+"-"+strings.TrimSpace(string(pidMax))+"0-abcdef-slot0")
	live := filepath.Join(cgroupBase(), "queuectl-"+host+"-"+strconv.Itoa(os.Getpid())+"-abcdef-slot0")
	for _, dir := range []string{dead, live} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(dir) })
	}
	fd, err := unix.Open(dead, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	left := exec.Command("sleep", "300")
	left.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	defer left.Process.Kill()

	c := newCgroups("starting", t.Logf)
	c.close()
	if err := left.Wait(); err == nil {
		t.Error("what was left in the dead worker's slot cgroup was not killed")
	}
	if exists(dead) {
		t.Errorf("the dead worker's slot cgroup %s is left", dead)
	}
	if !exists(live) {
		t.Errorf("the live worker's slot cgroup %s was removed", live)
	}
}

// Where the kernel refuses to clone a run into its slot's cgroup, the run
// starts without one, and so do the worker's later runs.
func TestRunStartsWhereTheCloneIntoItsCgroupFails(t *testing.T) {
	needCgroups(t)
	s := mustOpenStore(t)
	enqueue(t, s, claim.NewJob{ID: "one", Command: "true"})
	w := newWorker(t, s)
	w.host, w.id = HostID(), "refused"
	var said []string
	w.Events = func(e Event) {
		if e.Kind == EventWarning {
			said = append(said, e.Err)
		}
	}
	w.cgroups = newCgroups(w.id, w.logf)
	slot := w.cgroups.slot(0)
	defer w.cgroups.close()
	defer slot.close()
	if !slot.make() {
		t.Fatal("could not make the slot's cgroup")
	}
	// A removed cgroup takes no process (ENODEV), though its fd is open.
	if err := os.Remove(slot.dir); err != nil {
		t.Fatal(err)
	}
	j, r, err := s.Claim(context.Background(), claim.Claimant{WorkerID: w.id, Host: w.host, PID: os.Getpid(),
		Lease: w.Config.Lease, LogDir: w.LogDir})
	if err != nil {
		t.Fatal(err)
	}
	if res := w.execute(context.Background(), j, r, slot); res.err != "" || res.fault != "" || res.confinedBy != "" {
		t.Errorf("run = %+v; want it to run, held by no cgroup", res)
	}
	if !w.cgroups.off.Load() || len(said) != 1 || !strings.Contains(said[0], "runs get no cgroup") {
		t.Errorf("the worker said %q; want it to say once that its runs get no cgroup", said)
	}
}

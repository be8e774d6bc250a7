package run

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A job's processes end with the job (SPEC §6). The worker makes itself the
// child subreaper of everything it starts (PR_SET_CHILD_SUBREAPER): a
// process a job leaves behind (`cmd &`, a `setsid` daemon, a double fork)
// becomes the worker's child when its parent exits, instead of init's. So
// when a run ends, whatever is left of it is still the worker's to find and
// stop: the members of its process group, and the worker's descendants
// that carry the run's QUEUECTL_RUN mark in their environment. Adopted
// processes that exit are reaped here, since nothing else waits for them.

// children are the processes this process started and waits for itself;
// a zombie child that is not among them was adopted.
var children = struct {
	mu      sync.Mutex
	pids    map[int]int  // child to its pidfd (-1: none)
	zombies map[int]bool // adopted zombies seen by the last reapAdopted
}{pids: map[int]int{}}

// startChild starts cmd as a child this process waits for (waitChild).
func startChild(cmd *exec.Cmd) error {
	pidfd := -1
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if cmd.SysProcAttr.PidFD == nil && pidfds() {
		cmd.SysProcAttr.PidFD = &pidfd
	}
	children.mu.Lock()
	defer children.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	children.pids[cmd.Process.Pid] = pidfd
	return nil
}

// waitChild waits for a child started by startChild.
func waitChild(cmd *exec.Cmd) error { return waitChildThen(cmd, nil) }

// waitChildThen waits for a child started by startChild, as waitChild,
// and calls exited (when not nil) once the child has exited, before it is
// reaped and before its output is drained: its pid still names its
// process group then, so that exited may stop what the child left in it,
// which would otherwise hold its output open.
func waitChildThen(cmd *exec.Cmd, exited func()) error {
	children.mu.Lock()
	pidfd := children.pids[cmd.Process.Pid]
	children.mu.Unlock()
	awaitExit(pidfd)
	if exited != nil {
		// Without a pidfd awaitExit did not wait; WNOWAIT leaves the
		// child to be reaped by cmd.Wait.
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		exited()
	}
	err := cmd.Wait()
	children.mu.Lock()
	delete(children.pids, cmd.Process.Pid)
	children.mu.Unlock()
	return err
}

// pidfds reports whether this kernel has pidfds (Linux 5.3): asking
// clone(2) for one where it has none would fail the start.
var pidfds = sync.OnceValue(func() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// awaitExit waits until the process of pidfd has exited, in the network
// poller, and closes pidfd; cmd.Wait then reaps it at once. Waiting in
// waitid(2) instead holds a thread in a system call for as long as the job
// runs: the Go runtime then looks at such threads every 20 µs (sysmon) and
// hands their processor to another thread, which cost a busy worker tens
// of wake-ups per job. Without a pidfd, or where it cannot be polled,
// cmd.Wait waits as before.
func awaitExit(pidfd int) {
	if pidfd < 0 {
		return
	}
	if err := unix.SetNonblock(pidfd, true); err != nil {
		unix.Close(pidfd)
		return
	}
	f := os.NewFile(uintptr(pidfd), "pidfd")
	defer f.Close()
	// os.Process waits on a dup of pidfd, which shares its flags, and a
	// waitid(2) on a non-blocking pidfd fails with EAGAIN while the child
	// is not yet waitable: after a poll that failed, or, under ptrace
	// (strace -f), between its exit and its tracer's wait. Blocking again
	// before cmd.Wait, it waits.
	defer unix.SetNonblock(pidfd, false)
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// A pidfd reads as ready once its process has exited.
	rc.Read(func(fd uintptr) bool {
		ready := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(ready, 0)
		return err != nil || n > 0
	})
}

var subreaper struct {
	mu sync.Mutex
	n  int
}

// becomeSubreaper makes this process the child subreaper of its
// descendants until release is called by every worker that asked.
func becomeSubreaper() (release func()) {
	subreaper.mu.Lock()
	defer subreaper.mu.Unlock()
	if subreaper.n == 0 {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return func() {}
		}
	}
	subreaper.n++
	return func() {
		subreaper.mu.Lock()
		defer subreaper.mu.Unlock()
		if subreaper.n--; subreaper.n == 0 {
			unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		}
	}
}

// directChildren lists this process's children, from the children file of
// each of its threads.
func directChildren() []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	var out []int
	var buf [256]byte // each file's data is read, and parsed, in turn
	for _, t := range tasks {
		data, err := readProcFile("/proc/self/task/"+t.Name()+"/children", buf[:0])
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// reapAdopted reaps adopted children that have exited. A zombie is reaped
// only when a second look finds it still there, so that a child some
// other code of this process started, and is about to wait for, is never
// taken from it.
func reapAdopted() {
	children.mu.Lock()
	defer children.mu.Unlock()
	seen := map[int]bool{}
	for _, pid := range directChildren() {
		if _, ours := children.pids[pid]; ours {
			continue
		}
		if p, ok := readProc(pid); ok && p.zombie {
			if children.zombies[pid] {
				var ws unix.WaitStatus
				unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			} else {
				seen[pid] = true
			}
		}
	}
	children.zombies = seen
}

// runMark is the QUEUECTL_RUN value of a run: the worker, job and attempt.
func runMark(workerID, jobID string, attempt int) string {
	return workerID + ":" + jobID + ":" + strconv.Itoa(attempt)
}

// marked reports whether process pid's environment holds QUEUECTL_RUN=mark,
// or, when prefix is set, a QUEUECTL_RUN value starting with mark.
func marked(pid int, mark string, prefix bool) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("QUEUECTL_RUN=")); ok {
			return string(v) == mark || prefix && strings.HasPrefix(string(v), mark)
		}
	}
	return false
}

// ownGroup reports whether process group pgid, recorded for a run
// claimed at since and marked mark, may still be that run's. The kernel
// gives a group's number to no other process while a member of the group
// lives, so it is another's only when its leader (the process pgid) lives,
// carries no mark of the run, and started after the run did: its number
// came round again after the run's processes were all gone (a reaper or
// a restore long after a worker died).
func ownGroup(pgid int, mark string, since time.Time) bool {
	p, ok := readProc(pgid)
	if !ok || p.zombie || marked(pgid, mark, false) {
		return true
	}
	boot, ok := bootTime()
	started := boot.Add(time.Duration(p.start/userHZ)*time.Second + time.Duration(p.start%userHZ)*(time.Second/userHZ))
	return !ok || !started.After(since.Add(groupSlack))
}

// userHZ is the unit of /proc's start times: clock ticks, 100 a second on
// every Linux port Go supports.
const userHZ = 100

// groupSlack is how long after its claim a run's shell may start (its log
// files are opened first) and still be the run's.
const groupSlack = 10 * time.Second

// bootTime is when this host booted (/proc/stat's btime).
func bootTime() (time.Time, bool) {
	var buf [4096]byte
	data, err := readProcFile("/proc/stat", buf[:0])
	if err != nil {
		return time.Time{}, false
	}
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			sec, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			return time.Unix(sec, 0), err == nil
		}
	}
	return time.Time{}, false
}

// leftovers finds what is left of a run: live members of process group
// pgid (when > 0), and processes carrying its mark that descend from this
// process (descendants only, unless anywhere: the run of a worker that
// died, whose orphans went to init).
func leftovers(pgid int, mark string, prefix, anywhere bool) []int {
	groupAlive := pgid > 0 && syscall.Kill(-pgid, 0) == nil
	if !anywhere && !groupAlive && !adoptedAny() {
		return nil // the cheap case: nothing of it can be left
	}
	procs := listProcs()
	parent := make(map[int]int, len(procs))
	for _, p := range procs {
		parent[p.pid] = p.ppid
	}
	self := os.Getpid()
	descends := func(pid int) bool {
		for i := 0; i < 64 && pid > 1; i++ {
			if pid = parent[pid]; pid == self {
				return true
			}
		}
		return false
	}
	var out []int
	for _, p := range procs {
		if p.zombie || p.pid == self {
			continue
		}
		if pgid > 0 && p.pgrp == pgid || (anywhere || descends(p.pid)) && marked(p.pid, mark, prefix) {
			out = append(out, p.pid)
		}
	}
	return out
}

// adoptedAny reports whether this process has a child it did not start.
// The kernel gives an orphan to the subreaper's first live thread, the
// main one, so only its children file is read: one read per run.
func adoptedAny() bool {
	var buf [256]byte
	data, err := readProcFile("/proc/self/task/"+strconv.Itoa(os.Getpid())+"/children", buf[:0])
	if err != nil {
		return true // cannot tell: look
	}
	children.mu.Lock()
	defer children.mu.Unlock()
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			if _, ours := children.pids[pid]; !ours {
				return true
			}
		}
	}
	return false
}

// stop sends TERM to pids, waits up to grace for them to exit, then KILLs
// what is left; adopted ones are reaped.
func stop(pids []int, grace time.Duration) { stopUntil(pids, 0, time.Now().Add(grace)) }

// stopUntil sends TERM to pids but those of process group termed (0:
// none), which had theirs, waits until deadline for them to exit, then
// KILLs what is left; adopted ones are reaped.
func stopUntil(pids []int, termed int, deadline time.Time) {
	if len(pids) == 0 {
		return
	}
	for _, pid := range pids {
		if p, ok := readProc(pid); !ok || termed == 0 || p.pgrp != termed {
			syscall.Kill(pid, syscall.SIGTERM)
			syscall.Kill(pid, syscall.SIGCONT) // a stopped one acts on its TERM (killGroup)
		}
	}
	for len(pids) > 0 {
		var left []int
		for _, pid := range pids {
			if p, ok := readProc(pid); ok && !p.zombie {
				left = append(left, pid)
			}
		}
		if pids = left; len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	reapAdopted()
}

// childAttr puts the job in a session of its own, and so in its own
// process group, with no controlling terminal: a job of a worker started
// on a terminal that reads /dev/tty (a password prompt) fails at once, as
// under cron, instead of being stopped by SIGTTIN, a background group of
// that terminal, for ever. Pdeathsig kills the shell if this worker dies;
// the reaper of whichever worker recovers the run kills the rest of the
// group.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// keepInherited marks every descriptor this process inherited (above
// stderr) close-on-exec, so that no job or hook gets one: a worker started
// from a shell or a script with files or pipes open (`exec 7>log`, a
// harness's pipe) passed them to every job, which could write to them, or
// hold a pipe's reader waiting for an end. What a job is given (its
// stdin, stdout, stderr, its gate) is dup2'd into it, which close-on-exec
// does not touch; the runtime's own descriptors are close-on-exec already.
func keepInherited() {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

package run

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Every run is born in a cgroup where the worker's cgroup v2 directory is
// writable, so that whatever the job starts ends with the run however it
// left the job's process group. A cgroup made and removed for each run
// (what a run with a memory limit still gets, for its memory.max) costs a
// mkdir, a move or a clone into it, and a removal that waits for its
// processes to be torn down. So each slot of a worker owns one cgroup,
// made on its first run, and the shell of each run without a memory limit
// is cloned straight into it (clone3 CLONE_INTO_CGROUP, from an fd the
// slot keeps open). At the run's end, its shell reaped and its output
// read, cgroup.events says whether anything of the run is left in it:
// "populated 0", the common case, and the cgroup serves the next run as it
// is; "populated 1", and the cgroup is killed whole (cgroup.kill), retired
// (no run is cloned into it again: a shell cloned into a cgroup being
// killed would be killed too) and removed once empty, in the background,
// while the slot makes a fresh one. A worker removes its slots' cgroups
// when it stops; a worker that starts, or a reaper that recovers runs of
// this host, kills and removes those of workers that died.

// cgroups are a worker's slot cgroups.
type cgroups struct {
	base   string // the worker's cgroup v2 directory, "" when it may not write one
	prefix string // of its slots' cgroups' names: queuectl-<worker id>-slot
	logf   func(format string, args ...any)
	// off: a clone into a slot's cgroup failed where one without worked;
	// the worker's runs go without a cgroup from then on.
	off      atomic.Bool
	removing sync.WaitGroup // removals of retired cgroups
	mu       sync.Mutex
	stuck    []string // retired cgroups that outlived their removal's deadline
}

// slotCgroup is the cgroup one slot's runs are born in.
type slotCgroup struct {
	set    *cgroups
	name   string // queuectl-<worker id>-slot<i>
	made   int    // cgroups made for the slot so far
	dir    string // the current one, "" until the slot's first run
	fd     int    // dir opened O_PATH, for clone3; -1 with no dir
	events int    // dir's cgroup.events, read at each run's end; -1 with no dir
}

// newCgroups returns the slot cgroups of the worker id, below its cgroup v2
// directory where it may write one. Cgroups that workers of this host left
// when they died are killed and removed first.
func newCgroups(id string, logf func(string, ...any)) *cgroups {
	c := &cgroups{base: cgroupBase(), prefix: "queuectl-" + id + "-slot", logf: logf}
	c.sweep()
	return c
}

// slot returns the cgroup of slot i; it is made on the slot's first run.
func (c *cgroups) slot(i int) *slotCgroup {
	if c == nil {
		return nil
	}
	return &slotCgroup{set: c, name: c.prefix + strconv.Itoa(i), fd: -1, events: -1}
}

// bornIn sets cmd to start in the slot's cgroup, which it makes if it has
// none, and returns it; nil (and cmd unchanged) where runs get no cgroup.
func (s *slotCgroup) bornIn(cmd *exec.Cmd) *slotCgroup {
	if s == nil || s.set.base == "" || s.set.off.Load() {
		return nil
	}
	if s.fd < 0 && !s.make() {
		return nil
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, s.fd
	return s
}

// make makes the slot's next cgroup and opens it.
func (s *slotCgroup) make() bool {
	dir := filepath.Join(s.set.base, s.name)
	if s.made > 0 {
		dir += "." + strconv.Itoa(s.made)
	}
	s.made++
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return false
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return false
	}
	events, err := unix.Open(filepath.Join(dir, "cgroup.events"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		os.Remove(dir)
		return false
	}
	s.dir, s.fd, s.events = dir, fd, events
	return true
}

// refused is called when a clone into the slot's cgroup failed with err
// and one without worked: the worker's runs go without a cgroup, as where
// it may write none.
func (s *slotCgroup) refused(err error) {
	if s.set.off.CompareAndSwap(false, true) {
		s.set.logf("this worker's runs get no cgroup from now on: a clone into %s failed: %v", s.dir, err)
	}
}

// ended is called once a run born in the slot's cgroup has ended: its
// shell reaped, its output read, its process group stopped. Whatever is
// still in the cgroup came from the run: it is killed, and the cgroup
// retired.
func (s *slotCgroup) ended() {
	var buf [64]byte
	n, err := unix.Pread(s.events, buf[:], 0)
	if err == nil && bytes.Contains(buf[:max(n, 0)], []byte("populated 0")) {
		return
	}
	s.retire()
}

// retire kills what is in the slot's cgroup, and removes it once empty in
// the background; the slot's next run makes a new one.
func (s *slotCgroup) retire() {
	if s == nil || s.dir == "" {
		return
	}
	os.WriteFile(filepath.Join(s.dir, "cgroup.kill"), []byte("1"), 0)
	unix.Close(s.fd)
	unix.Close(s.events)
	s.set.remove(s.dir)
	s.dir, s.fd, s.events = "", -1, -1
}

// close ends the slot's cgroup as the slot stops.
func (s *slotCgroup) close() {
	if s == nil || s.dir == "" {
		return
	}
	s.retire()
}

// remove removes the cgroup dir, killed already, once its processes are
// gone, without making anyone wait: a cgroup whose processes are still
// being torn down cannot be removed yet.
func (c *cgroups) remove(dir string) {
	c.removing.Go(func() {
		deadline := time.Now().Add(killWait)
		for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
			err := os.Remove(dir)
			if err == nil || os.IsNotExist(err) {
				return
			}
			if time.Now().After(deadline) {
				c.mu.Lock()
				c.stuck = append(c.stuck, dir)
				c.mu.Unlock()
				return
			}
			time.Sleep(wait)
		}
	})
}

// close waits for the removals of retired cgroups, and tries once more to
// remove those that outlived theirs.
func (c *cgroups) close() {
	if c == nil {
		return
	}
	c.removing.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, dir := range c.stuck {
		if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
			c.logf("cgroup %s is left behind: %v", dir, err)
		}
	}
	c.stuck = nil
}

// slotName and runName match the names of the cgroups of workers and runs:
// queuectl-<host>-<pid>-<hex>-slot<i>[.<n>] for a slot's, where the
// worker's id is <host>-<pid>-<hex>, and queuectl-<pid>-<job>-<attempt>
// for a run's with a memory limit.
var (
	slotName = regexp.MustCompile(`^queuectl-(.+)-([0-9]+)-[0-9a-f]{6}-slot[0-9]+(\.[0-9]+)?$`)
	runName  = regexp.MustCompile(`^queuectl-([0-9]+)-`)
)

// sweep kills and removes the slot cgroups that workers of this host left
// when they died (kill -9, a crash), and removes the empty cgroups of runs
// whose workers died. A live worker's are left alone, and so are those of
// another host's workers (another container's) that share the directory.
func (c *cgroups) sweep() {
	if c == nil || c.base == "" {
		return
	}
	entries, err := os.ReadDir(c.base)
	if err != nil {
		return
	}
	host := HostName(HostID())
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "queuectl-") {
			continue
		}
		dir := filepath.Join(c.base, e.Name())
		if m := slotName.FindStringSubmatch(e.Name()); m != nil {
			if m[1] == host && deadPid(m[2]) {
				os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
				c.remove(dir)
			}
			continue
		}
		if m := runName.FindStringSubmatch(e.Name()); m != nil && deadPid(m[1]) {
			os.Remove(dir) // fails while anything is in it
		}
	}
}

// deadPid reports whether no process has the pid s.
func deadPid(s string) bool {
	pid, err := strconv.Atoi(s)
	return err == nil && pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// cgroupBase is the worker's own cgroup v2 directory, where it may make
// cgroups in it, or "".
func cgroupBase() string {
	if noRunCgroups {
		return ""
	}
	base := ownCgroup()
	if base == "" || unix.Access(base, unix.W_OK) != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err != nil {
		return ""
	}
	return base
}

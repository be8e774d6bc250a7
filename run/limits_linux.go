package run

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/queuectl/queuectl/claim"
)

// A job's limits are set on its shell while the shell waits behind the start
// gate, so every process the command starts inherits them and none runs
// without. Rlimits (prlimit) always; where the worker's cgroup v2 directory
// is writable, a run with a memory limit also gets a cgroup of its own,
// which holds memory.max when the memory controller is delegated there, and
// which is killed whole (cgroup.kill) when the run ends, so that nothing the
// job started survives it, however it escaped its process group. Other runs
// are born in their slot's cgroup (cgroups_linux.go), which does the same.
type confinement struct {
	// via is what held the run, for the run record: "cgroup" (a slot's,
	// no limits), "rlimit", "cgroup+rlimit".
	via    string
	cgroup string      // the run's cgroup directory, or ""
	slot   *slotCgroup // the slot's cgroup the run was born in, or nil
	memCG  bool        // memory.max is set in the cgroup (else RLIMIT_AS)
	limits claim.Limits
}

// inSlot is the confinement of a run without limits born in the slot's
// cgroup s; nil when it was born in none.
func inSlot(s *slotCgroup) *confinement {
	if s == nil {
		return nil
	}
	return &confinement{via: "cgroup", cgroup: s.dir, slot: s}
}

// confine sets l on the process pid (the gated shell). A run born in its
// slot's cgroup (slot, no memory limit) stays there; else runName names
// the run's own cgroup. A cgroup that cannot be made is no error: the
// rlimits hold.
func confine(pid int, l claim.Limits, runName string, slot *slotCgroup) (*confinement, error) {
	c := &confinement{via: "rlimit", limits: l}
	if slot != nil {
		c.via, c.cgroup, c.slot = "cgroup+rlimit", slot.dir, slot
	} else if dir := runCgroup(runName); dir != "" {
		if err := c.joinCgroup(dir, pid); err == nil {
			c.via = "cgroup+rlimit"
		}
	}
	set := func(res int, n uint64, what string) error {
		err := unix.Prlimit(pid, res, &unix.Rlimit{Cur: n, Max: n}, nil)
		if errors.Is(err, unix.EPERM) {
			if max, source := hostMax(res); n > max {
				return &overLimit{what: what, n: n, max: max, source: source}
			}
		}
		if err != nil {
			return fmt.Errorf("set %s limit %d: %w", what, n, err)
		}
		return nil
	}
	if l.Memory > 0 && !c.memCG {
		if err := set(unix.RLIMIT_AS, uint64(l.Memory), "memory"); err != nil {
			return c, err
		}
	}
	if l.CPU > 0 {
		// The soft limit sends SIGXCPU; the hard one, a second later, SIGKILL
		// for a job that ignores it.
		secs := uint64((l.CPU + time.Second - 1) / time.Second)
		if err := unix.Prlimit(pid, unix.RLIMIT_CPU, &unix.Rlimit{Cur: secs, Max: secs + 1}, nil); err != nil {
			return c, fmt.Errorf("set cpu limit %v: %w", l.CPU, err)
		}
	}
	if l.NoFile > 0 {
		if err := set(unix.RLIMIT_NOFILE, uint64(l.NoFile), "nofile"); err != nil {
			return c, err
		}
	}
	if l.NProc > 0 {
		if err := set(unix.RLIMIT_NPROC, uint64(l.NProc), "nproc"); err != nil {
			return c, err
		}
	}
	if l.FSize > 0 {
		if err := set(unix.RLIMIT_FSIZE, uint64(l.FSize), "fsize"); err != nil {
			return c, err
		}
	}
	return c, nil
}

// hostMax is the highest value of the rlimit res this worker may give a
// job, and where it comes from: its own hard limit, or for open files,
// when it may raise that (root), fs.nr_open.
func hostMax(res int) (uint64, string) {
	var l unix.Rlimit
	if err := unix.Getrlimit(res, &l); err != nil {
		return 0, err.Error()
	}
	if res == unix.RLIMIT_NOFILE && os.Geteuid() == 0 {
		if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
			if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
				return n, "/proc/sys/fs/nr_open"
			}
		}
	}
	return l.Max, "the worker's hard limit, ulimit -H"
}

// joinCgroup makes dir, sets memory.max where it can, and moves pid in.
func (c *confinement) joinCgroup(dir string, pid int) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	c.cgroup = dir
	if c.limits.Memory > 0 {
		err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(c.limits.Memory, 10)), 0)
		c.memCG = err == nil
		if c.memCG {
			os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		os.Remove(dir)
		c.cgroup, c.memCG = "", false
		return err
	}
	return nil
}

// end kills whatever is left in the run's cgroup and removes it. It reports
// whether the kernel killed a process of the run for its memory limit.
func (c *confinement) end() (oomKilled bool) {
	if c == nil || c.cgroup == "" {
		return false
	}
	if c.slot != nil {
		c.slot.ended()
		return false
	}
	oomKilled = c.memCG && cgroupEvent(filepath.Join(c.cgroup, "memory.events"), "oom_kill") > 0
	os.WriteFile(filepath.Join(c.cgroup, "cgroup.kill"), []byte("1"), 0)
	// rmdir fails while the killed processes are still being torn down.
	for deadline := time.Now().Add(killWait); ; time.Sleep(5 * time.Millisecond) {
		if err := os.Remove(c.cgroup); err == nil || os.IsNotExist(err) || time.Now().After(deadline) {
			break
		}
	}
	return oomKilled
}

// explain says which limit ended a run, from how its shell ended, or "".
func (c *confinement) explain(ps *os.ProcessState, oomKilled bool) string {
	if c == nil || ps == nil {
		return ""
	}
	status, _ := ps.Sys().(syscall.WaitStatus)
	l := c.limits
	sig := syscall.Signal(0)
	switch {
	case status.Signaled():
		sig = status.Signal()
	case status.Exited() && status.ExitStatus() > 128:
		sig = syscall.Signal(status.ExitStatus() - 128) // a child of the shell was killed
	}
	switch {
	case oomKilled:
		return fmt.Sprintf("memory limit %s exceeded", claim.FormatSize(l.Memory))
	case l.CPU > 0 && (sig == syscall.SIGXCPU || sig == syscall.SIGKILL && ps.UserTime()+ps.SystemTime() >= l.CPU):
		return fmt.Sprintf("cpu limit %v exceeded", l.CPU)
	case l.FSize > 0 && sig == syscall.SIGXFSZ:
		return fmt.Sprintf("file size limit %s exceeded", claim.FormatSize(l.FSize))
	}
	return ""
}

// memoryNote is added to the error of a failed run whose memory limit was
// an rlimit: the kernel kills nobody for it, allocations beyond it fail.
func (c *confinement) memoryNote() string {
	if c == nil || c.limits.Memory == 0 || c.memCG {
		return ""
	}
	return fmt.Sprintf(" (memory limit %s is an address-space rlimit here: allocations beyond it fail)", claim.FormatSize(c.limits.Memory))
}

// noRunCgroups makes every run go without a cgroup, as on a host without a
// writable cgroup v2 directory (for tests of what holds there).
var noRunCgroups bool

// runCgroup returns the directory for a run's cgroup, below the worker's own
// cgroup v2 directory, or "" when there is none the worker may write.
func runCgroup(runName string) string {
	base := cgroupBase()
	if base == "" {
		return ""
	}
	return filepath.Join(base, "queuectl-"+runName)
}

// ownCgroup finds this process's cgroup v2 directory: its "0::" line in
// /proc/self/cgroup under the cgroup2 mount point.
func ownCgroup() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var rel string
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	if rel == "" {
		return ""
	}
	mounts, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer mounts.Close()
	sc := bufio.NewScanner(mounts)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source ...
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(pre)
		if ok && len(fields) >= 5 && strings.HasPrefix(post, "cgroup2 ") && fields[3] == "/" {
			return filepath.Join(fields[4], rel)
		}
	}
	return ""
}

// cgroupEvent reads one counter of a cgroup's *.events file.
func cgroupEvent(path, key string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if k, v, ok := strings.Cut(string(line), " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

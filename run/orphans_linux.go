package run

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Orphans. A job's daemon that leaves its process group (setsid) and its
// environment (env -i, so no QUEUECTL_RUN mark) comes back to the worker,
// its child subreaper, when its parent exits; where every run is born in a
// cgroup (cgroups_linux.go), the cgroup holds it and ends with the run.
// Where runs get no cgroup (no writable cgroup v2 directory), nothing says
// which run it came from but its start time: it started after the run it came from did. So
// at the end of each run, an adopted process (and its descendants) that no
// live run holds (by process group, mark or cgroup), and that started
// before no live run did, is stopped: the runs it may have come from have
// all ended. One started while other runs were live is stopped when the
// last of them ends.
//
// Only a process in another session than this process's counts as
// adopted: every run has a session of its own (childAttr), which a job's
// daemon keeps or leaves with setsid, while a child this process started by
// other means than startChild (a browser a test drives, beside a worker in
// the same process) stays in this process's session and is not a run's to
// stop.

// liveRuns are the runs this process is running, by their shell's pid
// (also their process group).
var liveRuns = struct {
	mu sync.Mutex
	m  map[int]liveRun
}{m: map[int]liveRun{}}

type liveRun struct {
	start  uint64    // the shell's start, in clock ticks after boot; 0 until read (orphans)
	mark   string    // QUEUECTL_RUN
	cgroup string    // the run's cgroup's directory name, or ""
	lapse  time.Time // when its lease ends, as last renewed (the guard's)
}

// runStarted records the run of shell pid as live, its lease ending at
// lapse, and tells the guard. It reports whether the guard holds the run's
// group: whether the run dies with this worker, whatever kills it, and
// with its lease should this worker stop running.
func runStarted(pid int, mark string, conf *confinement, lapse func() time.Time) (guarded bool) {
	r := liveRun{mark: mark} // its start is read when an orphan asks (orphans)
	if conf != nil && conf.cgroup != "" {
		r.cgroup = filepath.Base(conf.cgroup)
	}
	liveRuns.mu.Lock()
	r.lapse = lapse() // read under liveRuns.mu, as runsRenewed reads them
	liveRuns.m[pid] = r
	guarded = guardGroup(pid, true, r.lapse, liveRunGroups)
	liveRuns.mu.Unlock()
	return guarded
}

// runsRenewed records the new lapse of the live runs of the groups a
// renewal renewed (lapses, by process group), and tells the guard.
func runsRenewed(renewed func() map[int]time.Time) {
	liveRuns.mu.Lock()
	defer liveRuns.mu.Unlock()
	lapses := renewed()
	for pid, lapse := range lapses {
		if r, ok := liveRuns.m[pid]; ok {
			r.lapse = lapse
			liveRuns.m[pid] = r
		} else {
			delete(lapses, pid) // ended meanwhile: the guard let it go
		}
	}
	guardRenewed(lapses, liveRunGroups)
}

// liveRunGroups lists the process groups of the live runs, with the lapse
// of each; liveRuns.mu held.
func liveRunGroups() map[int]time.Time {
	out := make(map[int]time.Time, len(liveRuns.m))
	for pid, r := range liveRuns.m {
		out[pid] = r.lapse
	}
	return out
}

// runEnded forgets the run of shell pid.
func runEnded(pid int) {
	liveRuns.mu.Lock()
	delete(liveRuns.m, pid)
	guardGroup(pid, false, time.Time{}, liveRunGroups)
	liveRuns.mu.Unlock()
}

// orphans lists the adopted processes, and their descendants, that belong
// to no live run and started before none did.
func orphans() []int {
	if !adoptedAny() {
		return nil
	}
	procs := listProcs()
	self := os.Getpid()
	me, _ := readProc(self)
	children.mu.Lock()
	adopted := map[int]bool{}
	for _, p := range procs {
		if _, ours := children.pids[p.pid]; p.ppid == self && !ours && p.sid != me.sid {
			adopted[p.pid] = true
		}
	}
	children.mu.Unlock()
	parent := make(map[int]int, len(procs))
	for _, p := range procs {
		parent[p.pid] = p.ppid
	}
	fromAdopted := func(pid int) bool {
		for i := 0; i < 64 && pid > 1; i, pid = i+1, parent[pid] {
			if adopted[pid] {
				return true
			}
		}
		return false
	}
	liveRuns.mu.Lock()
	live := make(map[int]liveRun, len(liveRuns.m))
	for pid, r := range liveRuns.m {
		if r.start == 0 {
			// Read once, now that a process was adopted: most runs end
			// before any is. The shell is this process's child, its pid
			// no other's until its run has ended; unread, 0 holds every
			// process as the run's.
			if p, ok := readProc(pid); ok {
				r.start = p.start
				liveRuns.m[pid] = r
			}
		}
		live[pid] = r
	}
	liveRuns.mu.Unlock()
	var out []int
	for _, p := range procs {
		if !p.zombie && p.pid != self && fromAdopted(p.pid) && !heldByLiveRun(p, live) {
			out = append(out, p.pid)
		}
	}
	return out
}

// heldByLiveRun reports whether process p may belong to one of the live
// runs.
func heldByLiveRun(p procInfo, live map[int]liveRun) bool {
	if len(live) == 0 {
		return false
	}
	if _, ok := live[p.pgrp]; ok {
		return true
	}
	cg, _ := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cgroup")
	for _, r := range live {
		if r.start <= p.start || marked(p.pid, r.mark, false) ||
			r.cgroup != "" && strings.Contains(string(cg), "/"+r.cgroup+"\n") {
			return true
		}
	}
	return false
}

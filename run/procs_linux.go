package run

import (
	"bytes"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// procInfo is one process as /proc shows it.
type procInfo struct {
	pid, ppid, pgrp int
	sid             int    // its session
	zombie          bool   // exited, waiting for its parent to reap it
	start           uint64 // when it started, in clock ticks after boot
}

// listProcs lists the processes of this host (of every user: /proc/*/stat
// is world-readable). Processes that end while it reads are left out.
func listProcs() []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procInfo, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// readProc reads /proc/<pid>/stat: "pid (comm) S ppid pgrp ...", where comm
// may hold spaces and parentheses, so fields are counted from the last ')'.
func readProc(pid int) (procInfo, bool) {
	var buf [512]byte
	data, err := readProcFile("/proc/"+strconv.Itoa(pid)+"/stat", buf[:0])
	if err != nil {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 3 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return procInfo{}, false
	}
	p := procInfo{pid: pid, ppid: ppid, pgrp: pgrp, zombie: string(f[0]) == "Z"}
	if len(f) > 3 {
		p.sid, _ = strconv.Atoi(string(f[3]))
	}
	if len(f) > 19 {
		p.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	}
	return p, true
}

// liveGroups returns which of pgids still have a process that has not
// exited. A zombie holds no files or locks any more: it only waits for its
// parent, which may be a PID 1 that never reaps.
func liveGroups(pgids []int) map[int]bool {
	live := map[int]bool{}
	for _, p := range listProcs() {
		if !p.zombie {
			live[p.pgrp] = true
		}
	}
	out := map[int]bool{}
	for _, g := range pgids {
		if live[g] {
			out[g] = true
		}
	}
	return out
}

// readProcFile reads the /proc file at path whole, into buf's storage while
// it fits. It makes four system calls (open, read, a read that returns
// nothing, close) where os.ReadFile makes ten: that one also tries to
// register the descriptor with the runtime's poller, which a /proc file
// refuses, and asks its size, which /proc gives as 0. A worker reads a
// few such files for each run.
func readProcFile(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(512, cap(buf)))
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// processStart returns when process pid started (clock ticks after boot),
// and false when there is no such process or it has exited (a zombie).
func processStart(pid int) (uint64, bool) {
	p, ok := readProc(pid)
	return p.start, ok && !p.zombie
}

package jobs

import (
	"os"
	"strings"
	"sync"
)

// HostID names this host as the registry and the runs record it (Run.Host): the
// hostname, a slash, and the first 8 hex digits of the kernel's boot id;
// in a PID namespace other than the kernel's first, a colon and that
// namespace's inode number. A pid means something only on the host, boot
// and PID namespace that recorded it, so workers on two machines with one
// hostname, a machine after a reboot, or two containers of one kernel
// with one hostname (pods of a node's host network, `docker --uts=host`,
// replicas given the same hostname), each with its own pids, never judge
// each other's pids as their own: they wait for the lease instead.
// Without a boot id (not Linux) it is the hostname alone.
func HostID() string {
	hostOnce.Do(func() {
		hostID, _ = os.Hostname()
		if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
			if id := strings.ReplaceAll(strings.TrimSpace(string(b)), "-", ""); len(id) >= 8 {
				hostID += "/" + id[:8]
				if ns := pidNamespace(); ns != "" {
					hostID += ":" + ns
				}
			}
		}
	})
	return hostID
}

// initPIDNamespace is the inode of the kernel's first PID namespace
// (PROC_PID_INIT_INO), the one of a host that runs no containers: a host
// ID there stays what it was before namespaces were told apart.
const initPIDNamespace = "4026531836"

// pidNamespace returns the inode number of this process's PID namespace
// when it is not the kernel's first; "" for the first, or when it cannot
// be read.
func pidNamespace() string {
	link, err := os.Readlink("/proc/self/ns/pid") // pid:[4026532451]
	if err != nil {
		return ""
	}
	ino, prefixed := strings.CutPrefix(link, "pid:[")
	ino, suffixed := strings.CutSuffix(ino, "]")
	if !prefixed || !suffixed || ino == initPIDNamespace {
		return ""
	}
	return ino
}

var (
	hostOnce sync.Once
	hostID   string
)

package jobs

import (
	"os"
	"strings"
	"sync"
)

// HostID names this host as the registry and the runs record it (Run.Host): the
// hostname, a slash, and the first 8 hex digits of the kernel's boot id.
// A pid means something only on the host and boot that recorded it, so
// workers on two machines with one hostname (two containers, say), or a
// machine after a reboot, never judge each other's pids as their own:
// they wait for the lease instead. Without a boot id (not Linux) it is the
// hostname alone.
func HostID() string {
	hostOnce.Do(func() {
		hostID, _ = os.Hostname()
		if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
			if id := strings.ReplaceAll(strings.TrimSpace(string(b)), "-", ""); len(id) >= 8 {
				hostID += "/" + id[:8]
			}
		}
	})
	return hostID
}

var (
	hostOnce sync.Once
	hostID   string
)

package run

import (
	"os"
	"strings"
	"sync"
	"time"
)

// HostID names this host as the registry and the runs record it: the
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

// HostName is the hostname part of a HostID, for people.
func HostName(hostID string) string {
	name, _, _ := strings.Cut(hostID, "/")
	return name
}

// otherHostGrace is how long after its lease a run of another host is
// taken for lost: the lease was renewed by that host's clock and is read
// by this one's, and a few seconds of skew must not lose a live run.
const otherHostGrace = 5 * time.Second

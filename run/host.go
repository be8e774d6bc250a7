package run

import (
	"github.com/queuectl/queuectl/claim/jobs"
	"strings"
	"time"
)

// HostID names this host as the registry and the runs record it: the
// hostname and the kernel's boot id (jobs.HostID).
func HostID() string { return jobs.HostID() }

// HostName is the hostname part of a HostID, for people.
func HostName(hostID string) string {
	name, _, _ := strings.Cut(hostID, "/")
	return name
}

// OtherHostGrace is how long after its lease a run of another host is
// taken for lost: the lease was renewed by that host's clock and is read
// by this one's, and a few seconds of skew must not lose a live run. A
// reaper looks once per reapInterval, so the run is recovered at most
// OtherHostGrace + reapInterval after its lease: within lease + 5 s of its
// worker's crash (SPEC §6), as the last renewal came before the crash.
const OtherHostGrace = 5*time.Second - reapInterval

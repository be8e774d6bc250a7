package run

import (
	"os"
	"runtime"
	"sync"
)

// slotsPerProc is how many slots one P of the Go runtime (GOMAXPROCS)
// serves. A worker's own work a job is a fraction of its job's, and its
// goroutines mostly wait: on a claim, a run's end, a pipe. With more Ps
// than that work needs, each wake-up finds an idle P, whose thread is woken
// to look for work and goes back to sleep, on the cores the jobs need.
// Measured on 2 cores (DECISIONS.md, "A worker's Ps follow its slots"):
// with one P instead of two, a worker of 2 slots made half the futex calls
// and a fifth of the epoll waits a job, and used 14% less CPU in a Make row.
const slotsPerProc = 8

// defaultProcs is the runtime's own GOMAXPROCS (the CPUs, or the
// container's CPU limit), read before setProcs first changes it.
var defaultProcs = sync.OnceValue(func() int { return runtime.GOMAXPROCS(0) })

// setProcs sizes the runtime's Ps to slots: one for up to slotsPerProc
// slots and one more for each slotsPerProc more, never more than the
// runtime's own choice. A GOMAXPROCS in the environment is the user's
// word, and stays.
func setProcs(slots int) {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	runtime.GOMAXPROCS(procsFor(slots, defaultProcs()))
}

// procsFor is the Ps for slots, at most limit.
func procsFor(slots, limit int) int {
	return max(1, min(limit, 1+(max(slots, 1)-1)/slotsPerProc))
}

//go:build !linux

package run

import (
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Off Linux there is no child subreaper: what leaves a job's process group
// is not found when the run ends (a timeout, a cancel and the reaper still
// stop the group).

func startChild(cmd *exec.Cmd) error { return cmd.Start() }
func waitChild(cmd *exec.Cmd) error  { return cmd.Wait() }
func becomeSubreaper() func()        { return func() {} }
func reapAdopted()                   {}
func adoptedAny() bool               { return false }

// childAttr puts the job in a session of its own, and so in its own
// process group (a cancel or timeout stops the whole group), with no
// controlling terminal (children_linux.go).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func runMark(workerID, jobID string, attempt int) string {
	return workerID + ":" + jobID + ":" + strconv.Itoa(attempt)
}

func leftovers(pgid int, mark string, prefix, anywhere bool) []int                    { return nil }
func ownGroup(pgid int, mark string, since time.Time) bool                            { return true }
func stop(pids []int, grace time.Duration)                                            {}
func stopUntil(pids []int, termed int, deadline time.Time)                            {}
func runStarted(pid int, mark string, conf *confinement, lapse func() time.Time) bool { return false }
func runsRenewed(renewed func() map[int]time.Time)                                    {}
func runEnded(pid int)                                                                {}
func orphans() []int                                                                  { return nil }

// waitChildThen waits for cmd and then calls exited (when not nil).
func waitChildThen(cmd *exec.Cmd, exited func()) error {
	err := cmd.Wait()
	if exited != nil {
		exited()
	}
	return err
}

// keepInherited leaves inherited descriptors as they are where /proc is
// not (see children_linux.go).
func keepInherited() {}

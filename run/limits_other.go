//go:build !linux

package run

import (
	"errors"
	"os"

	"github.com/queuectl/queuectl/claim"
)

// confinement is what confine set up; limits need Linux.
type confinement struct{ via string }

func confine(pid int, l claim.Limits, runName string, slot *slotCgroup) (*confinement, error) {
	return nil, errors.New("resource limits are only supported on Linux")
}

func (c *confinement) end() bool                             { return false }
func (c *confinement) explain(*os.ProcessState, bool) string { return "" }
func (c *confinement) memoryNote() string                    { return "" }

// inSlot: no run is born in a cgroup here.
func inSlot(*slotCgroup) *confinement { return nil }

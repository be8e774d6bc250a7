//go:build !linux

package run

import "os/exec"

// Runs are born in no cgroup here.
type (
	cgroups    struct{}
	slotCgroup struct{}
)

func newCgroups(string, func(string, ...any)) *cgroups { return nil }
func (c *cgroups) slot(int) *slotCgroup                { return nil }
func (c *cgroups) sweep()                              {}
func (c *cgroups) close()                              {}
func (s *slotCgroup) bornIn(*exec.Cmd) *slotCgroup     { return nil }
func (s *slotCgroup) refused(error)                    {}
func (s *slotCgroup) close()                           {}

//go:build !linux

package run

import "syscall"

// liveGroups returns which of pgids still have a process. Without /proc a
// zombie counts as alive.
func liveGroups(pgids []int) map[int]bool {
	out := map[int]bool{}
	for _, g := range pgids {
		if syscall.Kill(-g, 0) == nil {
			out[g] = true
		}
	}
	return out
}

// processStart reports whether process pid is alive; without /proc its
// start is not known (0), and a zombie counts as alive.
func processStart(pid int) (uint64, bool) {
	return 0, alive(pid)
}

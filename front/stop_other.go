//go:build !linux

package front

import (
	"os"
	"syscall"
)

// stopSelf stops the process. It may return before the process stopped:
// the job's processes are then let go on at once, and stop no more than
// they would for a run that did not watch Ctrl-Z.
func stopSelf() { syscall.Kill(os.Getpid(), syscall.SIGSTOP) }

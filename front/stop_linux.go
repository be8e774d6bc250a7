package front

import (
	"os"
	"runtime"
	"syscall"
)

// stopSelf stops the process, and returns once it is continued: SIGSTOP
// to the calling thread, which stops as it returns from the call. A
// SIGSTOP to the process could be taken by another thread, and this one
// go on for a while, saying "continue" before the process stopped.
func stopSelf() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	syscall.Tgkill(os.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
}

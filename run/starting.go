package run

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// StartingName is the file in a home that each worker of the home holds a
// shared flock on from before it opens the store until it is registered
// in it: `worker start &` followed by `wait` must not be told that no live
// worker serves the queue while one is on its way. A lock, not the file,
// says it: it goes with the process, however it ends.
const StartingName = "worker.starting"

// Starting marks a worker of home as starting, until done is called (more
// than once is fine) or the process ends. A home where the file cannot be
// made (read-only) marks nothing: the warning it spares is only a warning.
func Starting(home string) (done func()) {
	f, err := os.OpenFile(filepath.Join(home, StartingName), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600) // O_CLOEXEC: no job inherits the lock
	if err != nil {
		return func() {}
	}
	// Blocks only while a WorkerStarting holds the lock for its test.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		if f != nil {
			f.Close() // drops the lock
			f = nil
		}
	}
}

// WorkerStarting reports whether a worker of home is starting: it holds
// the lock Starting takes, and is not registered in the store yet. It
// holds the lock itself for an instant, without waiting.
func WorkerStarting(home string) bool {
	f, err := os.Open(filepath.Join(home, StartingName))
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	return errors.Is(err, syscall.EWOULDBLOCK)
}

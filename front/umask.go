package front

import "syscall"

// umask is this process's file mode creation mask, read once as the
// program starts. umask(2) reads it only by setting it: read later, while
// another goroutine (a test's, in the full program's in-process tests)
// may create a file, that file would get the mask set in between.
var umask = readUmask()

func readUmask() int {
	m := syscall.Umask(0o077)
	syscall.Umask(m)
	return m
}

// Umask is the caller's umask, as run's job carries it: the job's shell
// sets it, as the caller's shell would have run the command under it.
func Umask() int { return umask }

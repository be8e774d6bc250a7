package spool

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openForWriting reports whether any process holds f's file open for
// writing: a read lease (F_SETLEASE, F_RDLCK) is refused with EAGAIN while
// one does. The lease is let go at once. known is false where leases are
// not to be had (a file system without them, a file of another owner):
// the caller then goes by the settle time alone.
func openForWriting(f *os.File) (writing, known bool) {
	raw, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	raw.Control(func(fd uintptr) { writing, known = leaseRefused(fd) })
	return writing, known
}

// leaseRefused is openForWriting of a descriptor.
func leaseRefused(fd uintptr) (writing, known bool) {
	writing, known = leaseTaken(fd)
	if known && !writing {
		unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_UNLCK)
	}
	return writing, known
}

// leaseTaken is leaseRefused without letting the lease go: it goes with
// the open file when fd is closed.
func leaseTaken(fd uintptr) (writing, known bool) {
	_, err := unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_RDLCK)
	switch {
	case err == nil:
		return false, true
	case errors.Is(err, unix.EAGAIN):
		return true, true
	}
	return false, false
}

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
	var lerr error
	raw.Control(func(fd uintptr) {
		if _, lerr = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_RDLCK); lerr == nil {
			unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_UNLCK)
		}
	})
	switch {
	case lerr == nil:
		return false, true
	case errors.Is(lerr, unix.EAGAIN):
		return true, true
	}
	return false, false
}

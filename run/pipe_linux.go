package run

import (
	"os"

	"golang.org/x/sys/unix"
)

// jobPipe makes a pipe whose write end a job inherits (fd 1 or 2) and whose
// read end the worker reads in the network poller, for read deadlines.
// os.Pipe would put both ends in the poller: the job's end would be set
// non-blocking, registered, set blocking again when handed to the child,
// and unregistered at its close, six system calls per pipe for nothing.
func jobPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	// The job's end blocks, as a program expects of its stdout.
	if _, err := unix.FcntlInt(uintptr(p[1]), unix.F_SETFL, 0); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

// gatePipe makes a pipe neither end of which is polled: the job reads its
// end (fd 3) and the worker writes one short line into the other, which
// an empty pipe takes at once.
func gatePipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

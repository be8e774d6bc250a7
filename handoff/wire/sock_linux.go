package wire

import (
	"fmt"
	"os"
	"syscall"
)

// dial connects to the unix socket at path, of a peer of this user's
// only, by the system's calls, and gives it to the runtime's poller: a
// read that waits for the worker parks the goroutine, and with every P
// idle the runtime's monitor sleeps (a read blocked in the kernel keeps
// it polling, dozens of wake-ups in the few milliseconds an answer takes),
// and deadlines work (answerTimeout, a follow's Interrupt).
func dial(path string) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	addr := &syscall.SockaddrUnix{Name: path}
	for {
		err = syscall.Connect(fd, addr)
		if err != syscall.EINTR {
			break
		}
	}
	if err == nil {
		err = sameUser(fd)
	}
	if err == nil {
		// Non-blocking once connected (a unix socket connects at once, or
		// waits for room in the listener's backlog): os.NewFile puts it
		// in the poller.
		err = syscall.SetNonblock(fd, true)
	}
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// sameUser refuses the other end of the socket fd unless it runs as this
// process's user (SO_PEERCRED: the kernel's word, not the peer's).
func sameUser(fd int) error {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return fmt.Errorf("peer credentials: %w", err)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("refused a peer of uid %d (pid %d): not this user", cred.Uid, cred.Pid)
	}
	return nil
}

func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

package handoff

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// sameUser refuses the other end of conn unless it runs as this process's
// user (SO_PEERCRED: the kernel's word, not the peer's).
func sameUser(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if credErr != nil {
		return fmt.Errorf("peer credentials: %w", credErr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("refused a peer of uid %d (pid %d): not this user", cred.Uid, cred.Pid)
	}
	return nil
}

//go:build !linux

package handoff

import (
	"errors"
	"net"
)

// sameUser cannot ask the kernel who the peer is here: it refuses.
func sameUser(*net.UnixConn) error {
	return errors.New("peer credentials: not supported on this system")
}

//go:build !linux

package wire

import (
	"errors"
	"os"
)

// Here the client cannot ask the kernel who the peer is (SO_PEERCRED): it
// hands no job over, and the caller stores it itself.
func dial(string) (*os.File, error) {
	return nil, errors.New("peer credentials: not supported on this system")
}

func ownedByMe(os.FileInfo) bool { return false }

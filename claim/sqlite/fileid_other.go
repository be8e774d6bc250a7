//go:build !linux

package sqlite

import (
	"fmt"
	"os"
	"syscall"
)

// identify returns the identity of the open file f: device and inode.
func identify(f *os.File) (fileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, fmt.Errorf("stat %s: no device and inode", f.Name())
	}
	return fileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, nil
}

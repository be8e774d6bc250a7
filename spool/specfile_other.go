//go:build !linux

package spool

import (
	"os"
	"syscall"
)

// specFile is a spool file opened by take.
type specFile struct{ *os.File }

// openSpecFile opens path for reading without following a symlink, and
// without blocking on a FIFO that replaced the listed file.
func openSpecFile(path string) (specFile, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	return specFile{f}, err
}

func (f specFile) stat() (specInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return specInfo{}, err
	}
	return specInfo{regular: fi.Mode().IsRegular(), uid: owner(fi), size: fi.Size(), changed: changed(fi)}, nil
}

func (f specFile) openForWriting() (writing, known bool) { return openForWriting(f.File) }

func (f specFile) read(size int64) ([]byte, error) { return readSpec(f.File, size) }

//go:build !linux

package spool

import (
	"os"
	"path/filepath"
	"syscall"
)

// specFile is a spool file opened by take.
type specFile struct{ *os.File }

// dirFD is a directory whose files take, load and finish name relative to
// it; elsewhere than on Linux, by its path.
type dirFD struct{ path string }

func newDirFD(path string, _ *os.File) dirFD { return dirFD{path: path} }

// open opens the file name in d for reading without following a symlink,
// and without blocking on a FIFO that replaced the listed file.
func (d dirFD) open(name string) (specFile, error) {
	f, err := os.OpenFile(filepath.Join(d.path, name), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	return specFile{f}, err
}

// rename moves the file name of d to to's file newName.
func (d dirFD) rename(name string, to dirFD, newName string) error {
	return syscall.Rename(filepath.Join(d.path, name), filepath.Join(to.path, newName))
}

// remove unlinks the file name of d.
func (d dirFD) remove(name string) error { return os.Remove(filepath.Join(d.path, name)) }

func (f specFile) stat() (specInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return specInfo{}, err
	}
	return specInfo{regular: fi.Mode().IsRegular(), uid: owner(fi), size: fi.Size(), changed: changed(fi)}, nil
}

func (f specFile) openForWriting() (writing, known bool) { return openForWriting(f.File) }

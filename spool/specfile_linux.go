package spool

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// specFile is a spool file opened by take. On Linux it is a bare
// descriptor: an *os.File costs a spool file 2 µs of its ~50 (an attempt
// to register a regular file with the poller, a finalizer, locks), which
// nothing here needs.
type specFile struct{ fd int }

// dirFD is an open directory whose files take, load and finish name
// relative to it: on Linux its descriptor, so that the kernel does not walk
// the directory's whole path again for each of a spool file's open, rename
// and unlink (a tenth of a read+rename+unlink of a spool file at
// /tmp/<dir>/spool/.ingesting/<own>/).
type dirFD struct {
	path string // for messages, and the systems without *at calls
	fd   int
}

func newDirFD(path string, f *os.File) dirFD { return dirFD{path: path, fd: int(f.Fd())} }

// open opens the file name in d for reading without following a symlink,
// and without blocking on a FIFO that replaced the listed file.
func (d dirFD) open(name string) (specFile, error) {
	for {
		fd, err := syscall.Openat(d.fd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return specFile{fd: -1}, &fs.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: err}
		}
		return specFile{fd: fd}, nil
	}
}

// rename moves the file name of d to to's file newName; no Lstat of the
// target first, as os.Rename does: newName is a fresh name.
func (d dirFD) rename(name string, to dirFD, newName string) error {
	return syscall.Renameat(d.fd, name, to.fd, newName)
}

// remove unlinks the file name of d.
func (d dirFD) remove(name string) error {
	if err := syscall.Unlinkat(d.fd, name); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

func (f specFile) stat() (specInfo, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return specInfo{}, err
	}
	return specInfo{regular: st.Mode&syscall.S_IFMT == syscall.S_IFREG, uid: int(st.Uid), size: st.Size,
		changed: time.Unix(st.Ctim.Unix())}, nil
}

func (f specFile) openForWriting() (writing, known bool) { return leaseRefused(uintptr(f.fd)) }

func (f specFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(f.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f specFile) Close() error { return syscall.Close(f.fd) }

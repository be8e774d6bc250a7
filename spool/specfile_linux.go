package spool

import (
	"bytes"
	"io"
	"io/fs"
	"slices"
	"syscall"
	"time"
)

// specFile is a spool file opened by take. On Linux it is a bare
// descriptor: an *os.File costs a spool file 2 µs of its ~50 (an attempt
// to register a regular file with the poller, a finalizer, locks), which
// nothing here needs.
type specFile struct{ fd int }

// openSpecFile opens path for reading without following a symlink, and
// without blocking on a FIFO that replaced the listed file.
func openSpecFile(path string) (specFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return specFile{fd: -1}, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return specFile{fd: fd}, nil
	}
}

func (f specFile) stat() (specInfo, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return specInfo{}, err
	}
	return specInfo{regular: st.Mode&syscall.S_IFMT == syscall.S_IFREG, uid: int(st.Uid), size: st.Size,
		changed: time.Unix(st.Ctim.Unix())}, nil
}

// openForWriting is openForWriting of the descriptor, except that a lease
// it gets is kept until Close lets it go: take reads and renames the file
// in between, and a writer that opens it meanwhile waits that long
// (microseconds): the lease goes with the open file when f is closed. One
// fcntl a spool file instead of two.
func (f specFile) openForWriting() (writing, known bool) { return leaseTaken(uintptr(f.fd)) }

// read reads the file, a regular one, as readSpec does, but stops at the
// first short read: a regular file's read returns less than asked only at
// its end, so the read that would return nothing is not made. A read
// short for another reason (a file system that does so) leaves data
// incomplete, and load reads the file again before rejecting it.
func (f specFile) read(size int64) ([]byte, error) {
	buf := make([]byte, 0, min(max(size, 0), MaxSize)+bytes.MinRead)
	for {
		room := buf[len(buf):cap(buf)]
		room = room[:min(len(room), MaxSize+1-len(buf))]
		n, err := f.Read(room)
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return buf, err
		case n < len(room) || len(buf) > MaxSize:
			return buf, nil
		case len(buf) == cap(buf):
			buf = slices.Grow(buf, cap(buf))
		}
	}
}

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

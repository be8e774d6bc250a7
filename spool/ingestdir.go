package spool

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ingestDir is one ingester's private directory of taken files,
// spool/.ingesting/<pid>-<random>/. An exclusive flock on it says its owner
// lives; the kernel drops the lock when the owner dies, however it dies,
// and that is how other ingesters know to adopt what it left behind.
type ingestDir struct {
	root string   // spool/.ingesting
	path string   // root/<name>
	f    *os.File // the open directory, holding the flock
}

// openIngestDir creates and locks a new private directory in spool.
func openIngestDir(spool string) (*ingestDir, error) {
	root := filepath.Join(spool, ingesting)
	if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create ingest directory: %w", err)
	}
	for range 10 {
		path := filepath.Join(root, strconv.Itoa(os.Getpid())+"-"+randomHex(4))
		if err := os.Mkdir(path, 0o700); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return nil, fmt.Errorf("create ingest directory: %w", err)
		}
		d, ok := lockDir(path)
		if !ok {
			continue
		}
		// Between Mkdir and the lock, another ingester may have found the
		// directory unlocked, taken it for a dead one and removed it. Only
		// a directory still at its path after locking is ours.
		if fi, err := os.Lstat(path); err == nil && sameFile(d, fi) {
			return &ingestDir{root: root, path: path, f: d}, nil
		}
		d.Close()
	}
	return nil, fmt.Errorf("create ingest directory in %s: no free name after 10 tries", root)
}

// lockDir opens the directory at path and takes its flock without waiting.
// ok is false when the directory is gone or someone holds the lock.
func lockDir(path string) (d *os.File, ok bool) {
	d, err := os.Open(path) // O_CLOEXEC: jobs started later must not inherit the lock
	if err != nil {
		return nil, false
	}
	raw, err := d.SyscallConn()
	if err == nil {
		var lockErr error
		err = raw.Control(func(fd uintptr) { lockErr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB) })
		if err == nil {
			err = lockErr
		}
	}
	if err != nil {
		d.Close()
		return nil, false
	}
	return d, true
}

func sameFile(f *os.File, fi fs.FileInfo) bool {
	ffi, err := f.Stat()
	return err == nil && os.SameFile(ffi, fi)
}

// close removes the directory if it is empty and drops the lock. Files
// still in it (waiting, or left by a failed commit) stay for the next
// ingester to adopt.
func (d *ingestDir) close() error {
	os.Remove(d.path) // fails when not empty, which is fine: see above
	return d.f.Close()
}

// names lists the taken files in the directory.
func (d *ingestDir) names() ([]string, error) {
	return listNames(d.path)
}

// adopt moves the files of every dead ingester into d. The files keep their
// names, so their ingest keys: a file whose job was committed before its
// owner died is then found a Duplicate, not made a second job. It returns
// how many files it moved.
func (d *ingestDir) adopt() (int, error) {
	owners, err := os.ReadDir(d.root)
	if err != nil {
		return 0, fmt.Errorf("list ingest directories: %w", err)
	}
	moved := 0
	var errs []error
	for _, e := range owners {
		path := filepath.Join(d.root, e.Name())
		if path == d.path || !e.IsDir() {
			continue // a stray file here is nobody's taken file: never removed
		}
		other, ok := lockDir(path)
		if !ok {
			continue // alive, or adopted by someone else right now
		}
		files, err := listNames(path)
		if err != nil {
			errs = append(errs, err)
		}
		for _, f := range files {
			err := os.Rename(filepath.Join(path, f), filepath.Join(d.path, f))
			if err == nil {
				moved++
			} else if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("adopt taken file: %w", err))
			}
		}
		os.Remove(path) // while locked, so no new owner can be in it
		other.Close()
	}
	return moved, errors.Join(errs...)
}

// sync makes renames into and out of the directory durable.
func (d *ingestDir) sync() error {
	if err := d.f.Sync(); err != nil {
		return fmt.Errorf("sync ingest directory: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// newKey returns a new ingest key, 32 hex digits: the time, then 64 random
// bits. Keys made one after another sort together, so that a batch adds its
// keys at the end of the ingest_key index instead of on a page per key; the
// random half keeps ingesters that take files in the same nanosecond apart.
func newKey() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixNano()))
	rand.Read(b[8:])
	return hex.EncodeToString(b[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

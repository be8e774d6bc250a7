package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"modernc.org/sqlite"
)

// The WAL guard. SQLite finds a database's WAL and shared-memory index by
// name (queue.db-wal, queue.db-shm), and nothing in either says which
// database file they belong to. Put another file at queue.db (a restored
// backup, or a new file after the old one was deleted) while the old WAL
// is still beside it, and the next connection replays the old file's pages
// into the new one. So the store records, in queue.db-ident, the identity
// (device, inode, birth time) of the database file the WAL and SHM beside
// it belong to, and opens every connection behind a guard:
//
//   - under a shared flock of queue.db-ident, the file at the path must be
//     the one this store opened (and holds open, so that its inode number
//     cannot be reused), and queue.db-ident must name it;
//   - when queue.db-ident names another file, the guard takes the flock
//     exclusively, moves the WAL aside (queue.db-wal.foreign-<time>),
//     deletes the SHM (an index of that WAL, nothing more), fsyncs the
//     directory, and only then records the new identity;
//   - the connection is opened (SQLite opens the database, the WAL and the
//     SHM) while the shared flock is held, so no guard can move a WAL that
//     a connection is opening, and the path is checked again afterwards.
//
// The record also holds the mark of the file's content as queuectl last
// wrote it, which tells a file overwritten in place (cp keeps the inode)
// from the one the WAL was written for: content.go.
//
// DECISIONS.md, "A restored database never gets the old WAL", has the
// reasoning and the limits.

// identSuffix names the file that says which database file the WAL is for.
const identSuffix = "-ident"

// fileID identifies a file: device, inode, and birth time (0 where the file
// system keeps none).
type fileID struct {
	Dev, Ino uint64
	Birth    int64
}

func (id fileID) String() string {
	return fmt.Sprintf("queuectl database file: dev=%d ino=%d birth=%d\n", id.Dev, id.Ino, id.Birth)
}

// guardedConnector opens the store's connections behind the WAL guard.
type guardedConnector struct {
	e     *Engine
	inner driver.Connector
}

func newConnector(e *Engine) (driver.Connector, error) {
	name := dsn(e.path, e.noShm)
	if e.immutable {
		name = immutableDSN(e.path)
	}
	if e.readOnly {
		name += "&_pragma=query_only(1)"
	}
	inner, err := sqlite.NewConnector(name)
	if err != nil {
		return nil, err
	}
	return guardedConnector{e: e, inner: inner}, nil
}

func (c guardedConnector) Driver() driver.Driver { return c.inner.Driver() }

func (c guardedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	guard := c.e.guardWAL
	if c.e.readOnly {
		guard = c.e.guardWALReader
	}
	unlock, err := guard()
	if err != nil {
		return nil, err
	}
	defer unlock()
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.e.checkPath(); err != nil {
		// The file at the path changed while SQLite opened it, so this
		// connection may pair another database file with this one's WAL.
		// It is abandoned, not closed: closing could checkpoint that WAL
		// into the other file. The process is about to stop using the
		// store anyway (ErrReplaced).
		return nil, err
	}
	return conn, nil
}

// guardWAL makes sure the WAL and SHM beside the database belong to the
// store's file and its content, and returns with ident flocked so that
// they stay so until unlock is called: shared when the record vouches for
// them; exclusive when it had to be written (a new or replaced file, one
// overwritten in place, or one SQLite is about to switch to WAL mode, a
// write of the file itself), in which case unlock records the mark the
// file has once the connection is open.
func (e *Engine) guardWAL() (unlock func(), err error) {
	f, err := e.lockIdent(syscall.LOCK_SH)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	r, err := readRecord(f)
	if err != nil {
		return nil, err
	}
	m, err := markOf(e.pin)
	if err != nil {
		return nil, err
	}
	if r.file == e.id && !r.writing && r.mark == m && m.WAL {
		if err := e.checkPath(); err != nil {
			return nil, err
		}
		e.known.set(m)
		return func() { f.Close() }, nil
	}
	if err := flock(f, syscall.LOCK_EX); err != nil {
		return nil, err
	}
	// The flock was let go while it changed: read again.
	if r, err = readRecord(f); err != nil {
		return nil, err
	}
	if m, err = markOf(e.pin); err != nil {
		return nil, err
	}
	if err := e.adoptWAL(r, m); err != nil {
		return nil, err
	}
	if err := writeRecord(f, record{file: e.id, mark: m, writing: true}); err != nil {
		return nil, err
	}
	return func() {
		defer f.Close()
		if e.checkPath() != nil {
			return // not ours to record: the path names another file now
		}
		if m, err := markOf(e.pin); err == nil {
			e.known.set(m)
			putRecord(f, record{file: e.id, mark: m})
		}
	}, nil
}

// guardWALReader is guardWAL for a read-only store, which writes nothing:
// it neither records its file in -ident nor sets a WAL aside, and so
// refuses to open beside a WAL that -ident does not vouch for (another
// file's, or written over other content).
func (e *Engine) guardWALReader() (unlock func(), err error) {
	f, err := os.OpenFile(e.path+identSuffix, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, e.Check()
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err = flock(f, syscall.LOCK_SH); err == nil {
		err = e.vouchedWAL(f)
	}
	if err == nil {
		err = e.Check()
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// vouchedWAL returns a foreignWALError when the WAL beside the database has
// content that ident's record does not vouch for.
func (e *Engine) vouchedWAL(ident *os.File) error {
	r, err := readRecord(ident)
	if err != nil {
		return err
	}
	m, err := markOf(e.pin)
	if err != nil {
		return err
	}
	if r.file == (fileID{}) || (r.file == e.id && (r.mark == contentMark{})) || e.vouches(r, m) {
		return nil
	}
	if fi, err := os.Stat(e.path + "-wal"); err == nil && fi.Size() > 0 {
		return &foreignWALError{e.path}
	}
	return nil
}

// foreignWALError is a read-only open refused beside another file's WAL.
type foreignWALError struct{ path string }

func (e *foreignWALError) Error() string {
	return fmt.Sprintf("open database: %s-wal was written for another database file than %s (a copied or restored home?), and a read-only open sets nothing aside", e.path, e.path)
}

func (e *foreignWALError) Hint() string {
	return "serve the home it was copied from, or copy a home only while no queuectl process has it open"
}

// adoptWAL makes the store's file, with content m, the owner of the WAL
// beside it, moving aside a WAL and SHM that belong to another file or to
// other content (r says whose they are). The caller holds ident's flock
// exclusively.
func (e *Engine) adoptWAL(r record, m contentMark) error {
	// Only a store whose file is the one at the path may decide for it.
	if err := e.checkPath(); err != nil {
		return err
	}
	// No identity at all: the file is new, or the WAL was written by a
	// queuectl from before the guard. Such a WAL is kept: it holds
	// committed transactions. So is one recorded for this file before
	// marks were (no mark to go by), and one that a process keeping no
	// mark still writes.
	if r.file == (fileID{}) || (r.file == e.id && (r.mark == contentMark{})) || e.vouches(r, m) {
		return nil
	}
	wal, shm := e.path+"-wal", e.path+"-shm"
	aside := fmt.Sprintf("%s.foreign-%d", wal, time.Now().UnixNano())
	if err := os.Rename(wal, aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("move aside the WAL of a replaced database: %w", err)
	}
	if err := os.Remove(shm); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the index of a replaced database's WAL: %w", err)
	}
	// The move must be on disk before the new record is: after a power
	// cut, the old WAL must not be back under a record that vouches for
	// it.
	return syncDir(filepath.Dir(e.path))
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

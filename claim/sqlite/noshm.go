package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/queuectl/queuectl/claim"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Reading a full disk. The last process to close a store deletes its WAL
// and its shared-memory index (queue.db-shm); the next connection makes the
// index again, 32 KiB of it, and on a full disk SQLite cannot, so that
// every command, status and logs too, failed on a disk I/O error just when
// the user needs to look. Such a store is opened again without shared
// memory: in EXCLUSIVE locking mode, set before the first read, SQLite
// keeps the WAL index in the heap. Its connections only read (query_only),
// and each is closed as soon as it is put back, so the exclusive lock it
// holds on the file lasts one query, not the command. A store with a WAL
// to replay is left to fail as before (noWAL).

// shmFull reports whether err is SQLite failing to make or grow the
// shared-memory index on a file system with no space left.
func (e *Engine) shmFull(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() {
	case sqlite3.SQLITE_IOERR_SHMSIZE, sqlite3.SQLITE_IOERR_SHMOPEN, sqlite3.SQLITE_IOERR_SHMMAP:
		return claim.NoSpace(filepath.Dir(e.path)) && noWAL(e.path)
	}
	return false
}

// noWAL reports whether the database at path has no WAL with frames in it.
// Only such a store is read without shared memory: the last connection
// closed checkpoints its WAL, read-only or not, and a checkpoint is the
// store's own to make and record (content.go).
func noWAL(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0
}

// readWithoutShm reconnects the engine without shared memory, to read only,
// and checks the schema is current: one that needs migrating cannot be
// migrated on a full disk, so cause (the first failure) is returned then.
func (e *Engine) readWithoutShm(ctx context.Context, cause error) error {
	e.db.Close()
	e.readOnly, e.noShm = true, true
	if err := e.connect(); err != nil {
		return err
	}
	e.db.SetMaxIdleConns(0)
	version, err := schemaVersion(e.db.QueryRowContext(ctx, "PRAGMA user_version"))
	if err != nil {
		return err
	}
	if version != len(migrations) {
		return cause
	}
	return nil
}

// diskFull is the error of a write to a store opened without shared memory
// (readWithoutShm), which refuses it. SQLite's own words, "attempt to write
// a readonly database", are left out: they would send the user to the
// file's permissions.
func (e *Engine) diskFull() error {
	return fmt.Errorf("%w: %s (no space left for %s; queuectl can only read the store until there is room)",
		claim.ErrDiskFull, filepath.Dir(e.path), filepath.Base(e.path)+"-shm")
}

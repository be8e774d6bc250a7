// Package sqlite is the store's SQLite engine (claim.Engine): the queue in
// one file in WAL mode, shared by any number of processes on one host. It
// holds every SQLite statement of queuectl, the schema and its migrations
// (PRAGMA user_version), and SQLite's mechanisms: BEGIN IMMEDIATE for
// atomic claims, per-commit synchronous levels, a wake file watched with
// fsnotify, and the check that the file is still the one opened.
//
// Importing the package registers the engine with claim.Open.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/queuectl/queuectl/claim"
)

func init() {
	claim.RegisterEngine(claim.EngineSQLite, func(_ context.Context, path string, _ claim.OpenOptions) (claim.Engine, error) {
		return Open(path)
	})
	claim.RegisterReader(claim.EngineSQLite, func(ctx context.Context, path string, _ claim.OpenOptions) (claim.Engine, error) {
		return OpenReadOnly(ctx, path)
	})
}

//go:embed schema.sql
var schemaV1 string

//go:embed migration2.sql
var migration2 string

//go:embed migration3.sql
var migration3 string

//go:embed migration4.sql
var migration4 string

//go:embed migration5.sql
var migration5 string

//go:embed migration6.sql
var migration6 string

//go:embed migration7.sql
var migration7 string

//go:embed migration8.sql
var migration8 string

//go:embed migration9.sql
var migration9 string

//go:embed migration10.sql
var migration10 string

//go:embed migration11.sql
var migration11 string

//go:embed migration12.sql
var migration12 string

//go:embed migration13.sql
var migration13 string

//go:embed migration14.sql
var migration14 string

//go:embed migration15.sql
var migration15 string

//go:embed migration16.sql
var migration16 string

//go:embed migration17.sql
var migration17 string

//go:embed migration18.sql
var migration18 string

//go:embed migration19.sql
var migration19 string

//go:embed migration20.sql
var migration20 string

// migrations[i] takes a database from user_version i to i+1. Append only:
// a database made by an older binary must open with a newer one.
var migrations = []string{schemaV1, migration2, migration3, migration4, migration5, migration6, migration7, migration8, migration9, migration10, migration11, migration12, migration13, migration14, migration15, migration16, migration17, migration18, migration19, migration20}

// Engine is the queue in one SQLite file. It is safe for concurrent use by
// many goroutines, and many processes may open the same file.
type Engine struct {
	db   *sql.DB
	path string
	// pin holds the file opened at path open, so that its inode number
	// cannot be reused while the engine lives; file and id are its stat and
	// identity, to tell when the file at path is another one.
	pin  *os.File
	file os.FileInfo
	id   fileID
	// known is the content mark last vouched for (content.go).
	known knownMark

	stmts stmtCache
	level syncState
	group writeGroup
	wake  wakeFile
	// readOnly: every connection refuses to write (OpenReadOnly).
	readOnly bool
	// roFS: the file system is mounted read-only; immutable: and the file
	// has no WAL, so it is read as immutable (rofs.go).
	roFS, immutable bool
	// noShm: the connections keep the WAL index in their heap, on a full
	// disk (noshm.go).
	noShm bool
}

var _ claim.Engine = (*Engine)(nil)

// Open opens (creating, mode 0600) the database at path. Its schema is
// brought up to date by Migrate. The caller owns the Engine and must Close
// it.
func Open(path string) (*Engine, error) {
	pin, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, syscall.EROFS) {
		return openOnReadOnlyFS(path)
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	e := &Engine{path: path, pin: pin}
	if err := e.isDatabase(); err != nil {
		pin.Close()
		return nil, err
	}
	if err := e.connect(); err != nil {
		pin.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return e, nil
}

// sqliteHeader is how every SQLite database file begins.
const sqliteHeader = "SQLite format 3\x00"

// isDatabase returns a notADatabase error when the pinned file holds
// something else than a database: read before the connection opens, which
// would lay a WAL guard's record (and SQLite its WAL) beside the file a
// wrong --db names. An empty file is a database still to be made.
func (e *Engine) isDatabase() error {
	head := make([]byte, len(sqliteHeader))
	n, err := e.pin.ReadAt(head, 0)
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return nil
	case n == len(head) && string(head) == sqliteHeader:
		return nil
	case err != nil && !errors.Is(err, io.EOF):
		return fmt.Errorf("read %s: %w", e.path, err)
	}
	return notADatabase{e.path, errors.New("no SQLite header")}
}

// connect identifies the pinned file and makes the connection pool.
func (e *Engine) connect() error {
	// The keeper's flock: this process keeps the content mark, so its
	// SQLite locks on the file are not those of one that does not
	// (unmarkedSharer).
	err := flock(e.pin, syscall.LOCK_SH)
	if err == nil {
		e.file, err = e.pin.Stat()
	}
	if err == nil {
		e.id, err = identify(e.pin)
	}
	var conn driver.Connector
	if err == nil {
		conn, err = newConnector(e)
	}
	if err != nil {
		return err
	}
	// Every connection opens behind the WAL guard (walguard.go).
	e.db = sql.OpenDB(conn)
	// One connection per process: writers in one process queue in Go instead
	// of spinning in SQLite's busy handler; other processes wait on the lock.
	e.db.SetMaxOpenConns(1)
	return nil
}

// dsn puts the pragmas in the connection string so that every connection the
// pool makes gets them. busy_timeout comes first: the driver's default is 0.
// synchronous(FULL) makes each commit fsync the WAL, so Enqueue is durable
// when it returns. _txlock=immediate makes every transaction BEGIN IMMEDIATE,
// taking the write lock up front so that no two claims can read the same row.
func dsn(path string, noShm bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(30000)")
	if noShm {
		// Before SQLite's first look at the WAL; and journal_mode(WAL),
		// which would look for the shared memory, is left out: the file is
		// in WAL mode already (noshm.go).
		q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	// The store checkpoints itself, recording the file's mark each time
	// (content.go): a WAL must never be laid over content it was not
	// written for.
	q.Add("_pragma", "wal_autocheckpoint(0)")
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Check returns an ErrReplaced error when the file at the engine's path
// is no longer the one it opened. SQLite's open descriptors still reach the
// old file, so writes would succeed where no other process looks; every
// write checks first.
//
// A file overwritten in place (cp of a backup keeps the inode) is another
// database too: its content is not the one queuectl last recorded.
func (e *Engine) Check() error {
	fi, err := os.Stat(e.path)
	if err == nil && os.SameFile(fi, e.file) {
		return e.checkContent(fi)
	}
	return e.replaced(err)
}

// checkPath is Check without the content's mark: whether the file at the
// path is the one the engine opened.
func (e *Engine) checkPath() error {
	fi, err := os.Stat(e.path)
	if err == nil && os.SameFile(fi, e.file) {
		return nil
	}
	return e.replaced(err)
}

func (e *Engine) replaced(err error) error {
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("check database file: %w", err)
	}
	return fmt.Errorf("%w: %s was deleted or replaced while queuectl had it open; start queuectl again to use the file now there", claim.ErrReplaced, e.path)
}

// Location returns the database file's path.
func (e *Engine) Location() string { return e.path }

// Close closes the database.
func (e *Engine) Close() error {
	e.wake.close()
	e.stmts.close()
	err := e.closeDB()
	e.pin.Close()
	return err
}

// Migrate brings the schema up to date.
func (e *Engine) Migrate(ctx context.Context) error {
	err := e.migrate(ctx)
	// The first connections to a new file race to switch it to WAL, and
	// SQLite fails the losers with SQLITE_BUSY at once instead of waiting
	// busy_timeout. Retry them for as long as busy_timeout would wait.
	for start := time.Now(); isBusy(err) && time.Since(start) < 30*time.Second; {
		time.Sleep(10 * time.Millisecond)
		err = e.migrate(ctx)
	}
	if e.shmFull(err) {
		err = e.readWithoutShm(ctx, err)
	}
	return e.fault(err)
}

func (e *Engine) migrate(ctx context.Context) error {
	// Most opens find the schema current: read the version without taking
	// the write lock, which would cost every command an fsync'd commit.
	version, err := schemaVersion(e.db.QueryRowContext(ctx, "PRAGMA user_version"))
	if err != nil || version == len(migrations) {
		return err
	}
	return e.tx(ctx, func(tx *sql.Tx) error {
		version, err := schemaVersion(tx.QueryRowContext(ctx, "PRAGMA user_version"))
		if err != nil {
			return err
		}
		for v := version; v < len(migrations); v++ {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
			return fmt.Errorf("set schema version: %w", err)
		}
		return nil
	})
}

// schemaVersion reads the schema version and refuses one newer than this
// binary.
func schemaVersion(row *sql.Row) (int, error) {
	var version int
	if err := row.Scan(&version); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if version > len(migrations) {
		return 0, &claim.NewerSchemaError{Version: version, Known: len(migrations)}
	}
	return version, nil
}

// isUnique reports whether err is a UNIQUE constraint failure.
func isUnique(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// isBusy reports whether err is SQLITE_BUSY (of any extended kind).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// fault names the cause of a failed write when it lies outside SQLite: the
// file was deleted or replaced (ErrReplaced, whatever SQLite made of it,
// often "disk I/O error"), or the disk is full (ErrDiskFull).
func (e *Engine) fault(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	if rerr := e.Check(); errors.Is(rerr, claim.ErrReplaced) {
		return rerr
	}
	if e.noShm && se.Code()&0xff == sqlite3.SQLITE_READONLY {
		return e.diskFull()
	}
	if code := se.Code() & 0xff; (code == sqlite3.SQLITE_READONLY || code == sqlite3.SQLITE_IOERR || code == sqlite3.SQLITE_CANTOPEN) &&
		(e.roFS || claim.ReadOnlyFS(filepath.Dir(e.path))) {
		return e.readOnlyFS(err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_NOTADB:
		return notADatabase{e.path, err}
	case sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("%w: restore a backup (queuectl db restore): %s: %v", claim.ErrCorrupt, e.path, err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR:
		if claim.NoSpace(filepath.Dir(e.path)) {
			return fmt.Errorf("%w: %v", claim.DiskFullAt(e.path, false), err)
		}
		fallthrough
	case sqlite3.SQLITE_CANTOPEN:
		// SQLite creates the WAL and its index beside the file as it
		// opens it: with no inode left, "unable to open database file".
		if claim.NoInodes(filepath.Dir(e.path)) {
			return fmt.Errorf("%w: %v", claim.DiskFullAt(e.path, true), err)
		}
	}
	return err
}

// notADatabase is a store whose file is no SQLite database: most often
// --db names some other file, over which restoring a backup is the last
// thing to advise first. It is ErrCorrupt all the same: a long-running
// process stops on it.
type notADatabase struct {
	path string
	err  error
}

func (e notADatabase) Error() string {
	return e.path + " is not a SQLite database (" + e.err.Error() + "): check --db and $QUEUECTL_DB; " +
		"if it held your queue, it is corrupt: restore a backup (queuectl db restore)"
}

func (e notADatabase) Is(target error) bool { return target == claim.ErrCorrupt }
func (e notADatabase) Unwrap() error        { return e.err }

// Health runs PRAGMA quick_check (the b-trees and their pages, without
// matching each index to its table: integrity_check's slow half) and reads
// the schema version.
func (e *Engine) Health(ctx context.Context) (claim.Health, error) {
	h := claim.Health{Latest: len(migrations)}
	version, err := schemaVersion(e.db.QueryRowContext(ctx, "PRAGMA user_version"))
	if err != nil {
		return h, err
	}
	h.Schema = version
	lines, err := queryAll(ctx, e, "check database", claim.ScanValue[string], "PRAGMA quick_check")
	for _, line := range lines {
		if line != "ok" {
			h.Problems = append(h.Problems, line)
		}
	}
	return h, err
}

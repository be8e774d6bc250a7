package sqlite

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// openOnReadOnlyFS opens, to read only, the database at path on a file
// system mounted read-only (by the admin, or by the kernel after an I/O
// error: ext4's errors=remount-ro): status, list, show and logs still show
// what the store holds, and every write says why it cannot be.
func openOnReadOnlyFS(path string) (*Engine, error) {
	pin, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// With no WAL beside it (the last process closed it cleanly), SQLite
	// could not create one, nor its index, to open the file: read it as
	// immutable, which it is while its file system is read-only.
	e := &Engine{path: path, pin: pin, readOnly: true, roFS: true, immutable: noWAL(path)}
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

// readOnlyFS is err, a write's, naming the read-only file system that
// failed it.
func (e *Engine) readOnlyFS(err error) error {
	return fmt.Errorf("read-only file system: %s (mount it read-write again; until then the store can only be read): %w",
		filepath.Dir(e.path), err)
}

// immutableDSN opens the file as one nothing changes: no WAL, no index, no
// locks.
func immutableDSN(path string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&immutable=1&_pragma=busy_timeout(30000)"
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func init() {
	claim.RegisterRestorer(claim.EngineSQLite, Restore)
}

// Backup writes a consistent copy of the database to the new file to
// (VACUUM INTO: one read transaction, so writers go on meanwhile), mode
// 0600, fsync'd. It refuses a file that exists (ErrConflict).
func (e *Engine) Backup(ctx context.Context, to string) error {
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s exists; a backup never overwrites a file", claim.ErrConflict, to)
	}
	if err != nil {
		return fmt.Errorf("back up: %w", err)
	}
	f.Close()
	// VACUUM INTO writes into an empty file, keeping its mode.
	if _, err := e.db.ExecContext(ctx, "VACUUM INTO ?", to); err != nil {
		err = e.backupFault(ctx, to, e.fault(err)) // before the partial copy is removed
		os.Remove(to)
		return fmt.Errorf("back up: %w", err)
	}
	if err := syncFile(to); err != nil {
		err = e.backupFault(ctx, to, err)
		os.Remove(to)
		return err
	}
	return syncDir(filepath.Dir(to))
}

// backupFault is err, of a backup to the file to, saying so when the disk
// to is on has no room for it: SQLite's "database or disk is full" does
// not say which disk. SQLite asks for the copy's whole size before it
// writes it (a size hint), so the disk may fail it with room left, just
// not enough.
func (e *Engine) backupFault(ctx context.Context, to string, err error) error {
	dir := filepath.Dir(to)
	var st syscall.Statfs_t
	if errors.Is(err, claim.ErrDiskFull) || syscall.Statfs(dir, &st) != nil {
		return err
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if size := e.size(ctx); free == 0 || size > free {
		return fmt.Errorf("%w: %s (no space left for the backup %s: it needs about %d KiB, %d KiB free): %v",
			claim.ErrDiskFull, dir, filepath.Base(to), (size+1023)>>10, free>>10, err)
	}
	return err
}

// size is how large the database is now, its WAL's pages too (0 when it
// cannot tell): about what a copy takes.
func (e *Engine) size(ctx context.Context) int64 {
	var pages, pageSize int64
	if e.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages) != nil ||
		e.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize) != nil {
		return 0
	}
	return pages * pageSize
}

// Restore puts a copy of the backup file from at path, once PRAGMA
// integrity_check passes on it and ready (when not nil) lets it, and
// returns where the file it replaced
// was kept (path.before-restore-TIME, with its WAL beside it, so that the
// two still open together). Under ident's exclusive flock, the copy is
// renamed over path (atomic: any process sees the old file or the new
// one), then the old WAL goes with the old file, its index is deleted,
// and the new file is recorded as the owner of the WAL to come. A process
// that still has the old file open finds it replaced (Check) and stops.
//
// The old WAL moves only once the new file is in place: a restore killed
// before leaves the old file with its WAL, whole; one killed after leaves
// the new file beside a WAL that ident says is the old file's, which the
// next guard sets aside (adoptWAL). Moved first, a kill in between would
// leave the old file without the transactions of its WAL.
//
// The copy of a restore that was killed (path.restoring-PID, of a process
// that is gone) is removed first: it may be as large as the database.
func Restore(ctx context.Context, path, from string, ready func() error) (kept string, err error) {
	removeDeadCopies(path)
	tmp := fmt.Sprintf("%s.restoring-%d", path, os.Getpid())
	if err := copyFile(from, tmp); err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	if err := verifyBackup(ctx, tmp, from); err != nil {
		return "", err
	}
	if ready != nil {
		if err := ready(); err != nil {
			return "", err
		}
	}
	ident, err := (&Engine{path: path}).lockIdent(syscall.LOCK_EX)
	if err != nil {
		return "", err
	}
	defer ident.Close()
	// A time a person reads (UTC, to the nanosecond, so never twice).
	kept = path + ".before-restore-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	switch err := os.Link(path, kept); {
	case errors.Is(err, fs.ErrNotExist):
		kept = ""
	case err != nil:
		return "", fmt.Errorf("keep the database restored over: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return "", err
	}
	if kept != "" {
		if err := os.Rename(path+"-wal", kept+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("keep the WAL of the database restored over: %w", err)
		}
	}
	if err := os.Remove(path + "-shm"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("remove the index of the old WAL: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return "", err
	}
	return kept, recordFile(ident, path)
}

// recordFile records the file at path, with its content as it is, as the
// owner of the WAL beside it.
func recordFile(ident *os.File, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	id, err := identify(f)
	if err != nil {
		return err
	}
	m, err := markOf(f)
	if err != nil {
		return err
	}
	return writeRecord(ident, record{file: id, mark: m})
}

// verifyBackup refuses (ErrInvalid) a file that is not a sound queuectl
// database this binary can open: PRAGMA integrity_check, the schema
// version, the jobs table. The file is opened immutable, so that nothing
// is created beside it or written to it.
func verifyBackup(ctx context.Context, path, name string) error {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		return fmt.Errorf("check the backup: %w", err)
	}
	defer db.Close()
	bad := func(why string, args ...any) error {
		return fmt.Errorf("%w: %s is not a sound queuectl backup: %s", claim.ErrInvalid, name, fmt.Sprintf(why, args...))
	}
	var res string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return bad("%v", err)
	}
	if res != "ok" {
		return bad("integrity_check says %q", res)
	}
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return bad("%v", err)
	}
	if version > len(migrations) {
		return bad("its schema version %d is newer than this queuectl knows (%d)", version, len(migrations))
	}
	var jobs int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM jobs").Scan(&jobs); err != nil {
		return bad("%v", err)
	}
	return nil
}

// copyFile copies the regular file from to the new file to (mode 0600),
// fsync'd.
func copyFile(from, to string) (err error) {
	src, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("%w: read the backup: %v", claim.ErrInvalid, err)
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", claim.ErrInvalid, from)
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer func() {
		if cerr := dst.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("restore: %w", cerr)
		}
		if err != nil {
			os.Remove(to)
		}
	}()
	if _, err := io.Copy(dst, src); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := dst.Sync(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// removeDeadCopies removes the copies that restores of processes now gone
// left beside path. A pid taken again by another process keeps its copy.
func removeDeadCopies(path string) {
	entries, _ := os.ReadDir(filepath.Dir(path))
	prefix := filepath.Base(path) + ".restoring-"
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		if pid, err := strconv.Atoi(rest); err == nil && pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			os.Remove(filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
}

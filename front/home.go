package front

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/queuectl/queuectl/claim/jobs"
	"github.com/queuectl/queuectl/handoff/wire"
	"github.com/queuectl/queuectl/internal/private"
)

// ErrNoUserHome means neither a home was given nor the user's own home
// directory is known.
var ErrNoUserHome = errors.New("no home directory")

// HomePaths resolves the home directory (home, $QUEUECTL_HOME, else
// ~/.queuectl) and the database (db, $QUEUECTL_DB, $QUEUECTL_DB_PATH, else
// HOME/queue.db), as --home and --db say. The home comes back absolute,
// and so does the database in it: a worker gives them to its jobs
// (QUEUECTL_HOME, QUEUECTL_DB), which run in directories of their own,
// and a queuectl there must reach the same queue (the full program makes
// a SQLite --db absolute too, once it knows it is one).
func HomePaths(home, db string) (dir, dbPath string, err error) {
	dir = home
	if dir == "" {
		dir = os.Getenv("QUEUECTL_HOME")
	}
	if dir == "" {
		userHome, err := os.UserHomeDir()
		if err != nil {
			return "", "", err
		}
		dir = filepath.Join(userHome, ".queuectl")
	}
	dbPath = db
	if dbPath == "" {
		dbPath = os.Getenv("QUEUECTL_DB")
	}
	if dbPath == "" {
		dbPath = os.Getenv("QUEUECTL_DB_PATH")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", err
	}
	if dbPath == "" {
		dbPath = filepath.Join(dir, "queue.db")
	}
	return dir, dbPath, nil
}

// Socket returns the enqueue socket of the home that --home and --db
// (home, db) name, and the database a client names to its worker, when a
// worker may serve it: the home is this user's and private, and the socket
// is there. Any other home takes the full program's path, which says what
// is wrong with it.
func Socket(home, db string) (sock, dbAbs string, ok bool) {
	dir, db, err := HomePaths(home, db)
	if err != nil || !Private(dir) {
		return "", "", false
	}
	sock = filepath.Join(dir, wire.SocketName)
	if _, err := os.Lstat(sock); err != nil {
		return "", "", false
	}
	if CheckHome(dir, db, true) != nil {
		return "", "", false
	}
	if dbAbs, err = filepath.Abs(db); err != nil {
		return "", "", false
	}
	return sock, dbAbs, true
}

// Private reports whether dir is a directory of this user that no one else
// may write to: only then is a socket in it this user's.
func Private(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// CheckHome refuses a home (dir, with its database db) whose files
// another user could write or replace (private.CheckPrivate); withSpool
// checks its spool directory too.
func CheckHome(dir, db string, withSpool bool) error {
	for _, p := range PrivatePaths(dir, db, withSpool) {
		if err := private.CheckPrivate(p.Path, p.What, p.Follow); err != nil {
			return err
		}
	}
	return nil
}

// PrivatePath is a path of a home that must be the user's alone.
type PrivatePath struct {
	Path, What string
	Follow     bool // a symbolic link is allowed (the home, a --db elsewhere)
}

// PrivatePaths lists what CheckHome checks, the spool when withSpool says so.
func PrivatePaths(dir, db string, withSpool bool) []PrivatePath {
	checks := []PrivatePath{
		{dir, "home", true},
		{filepath.Join(dir, private.RejectedDir), "rejected directory", false},
		{filepath.Join(dir, private.DeadDir), "dead directory", false},
		{filepath.Join(dir, private.SchedulesDir), "schedules directory", false},
		{filepath.Join(dir, "logs"), "logs directory", false},
		{filepath.Join(dir, wire.SocketName), "enqueue socket", false},
	}
	if withSpool {
		checks = append(checks, PrivatePath{filepath.Join(dir, private.SpoolDir), "spool directory", false})
	}
	// The database may live outside the home (--db); its own path may be a
	// link then, its companions never.
	if jobs.EngineFor(db) != jobs.EngineSQLite {
		return checks
	}
	inHome := filepath.Dir(db) == filepath.Clean(dir)
	checks = append(checks, PrivatePath{db, "database file", !inHome})
	for _, suffix := range []string{"-wal", "-shm", "-ident", "-wake"} {
		checks = append(checks, PrivatePath{db + suffix, "database file", false})
	}
	return checks
}

package front

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	// A SQLite path is made absolute, as the worker's is; a PostgreSQL URL
	// is no path (filepath.Abs would make one of it, and no worker its).
	dbAbs = db
	if jobs.EngineFor(db) == jobs.EngineSQLite {
		if dbAbs, err = filepath.Abs(db); err != nil {
			return "", "", false
		}
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
		if err := p.Check(); err != nil {
			return err
		}
	}
	return nil
}

// PrivatePath is a path of a home that must be the user's alone.
type PrivatePath struct {
	Path, What string
	Follow     bool          // a symbolic link is allowed (the home, a --db elsewhere)
	Fix        func() string // when set, the fix instead of private.CheckPrivate's
}

// Check is private.CheckPrivate of p, with p's own fix when it has one.
func (p PrivatePath) Check() error {
	err := private.CheckPrivate(p.Path, p.What, p.Follow)
	var unsafe *private.UnsafeError
	if p.Fix != nil && errors.As(err, &unsafe) {
		unsafe.Fix = p.Fix()
	}
	return err
}

// PrivatePaths lists what CheckHome checks, the spool when withSpool says so.
func PrivatePaths(dir, db string, withSpool bool) []PrivatePath {
	checks := []PrivatePath{
		{Path: dir, What: "home", Follow: true},
		{Path: filepath.Join(dir, private.RejectedDir), What: "rejected directory"},
		{Path: filepath.Join(dir, private.DeadDir), What: "dead directory"},
		{Path: filepath.Join(dir, private.SchedulesDir), What: "schedules directory"},
		{Path: filepath.Join(dir, "logs"), What: "logs directory"},
		{Path: filepath.Join(dir, wire.SocketName), What: "enqueue socket"},
	}
	if withSpool {
		checks = append(checks, PrivatePath{Path: filepath.Join(dir, private.SpoolDir), What: "spool directory"})
	}
	// The database may live outside the home (--db); its own path may be a
	// link then, its companions never. Its directory must be private too:
	// whoever may write there can swap the file, or plant its WAL, between
	// the checks below and SQLite's open of it, and make you run commands.
	if jobs.EngineFor(db) != jobs.EngineSQLite {
		return checks
	}
	inHome := filepath.Dir(db) == filepath.Clean(dir)
	if !inHome {
		parent := filepath.Dir(db)
		checks = append(checks, PrivatePath{Path: parent, What: "database directory", Follow: true, Fix: func() string { return moveDB(db) }})
	}
	checks = append(checks, PrivatePath{Path: db, What: "database file", Follow: !inHome})
	for _, suffix := range dbCompanions {
		checks = append(checks, PrivatePath{Path: db + suffix, What: "database file"})
	}
	return checks
}

// dbCompanions are the files SQLite and queuectl keep beside a database.
var dbCompanions = []string{"-wal", "-shm", "-ident", "-wake"}

// moveDB is the fix for database db in a directory others may write to:
// move it, and those of its companions that exist, by name (a pattern
// would take whatever else starts with its name), to a directory of the
// user's own. A db that is a directory is no database to move.
func moveDB(db string) string {
	if fi, err := os.Stat(db); err == nil && fi.IsDir() {
		return fmt.Sprintf("%s is a directory: name a database file, in a directory of your own: mkdir -m 700 DIR, then pass --db DIR/queue.db (or give no --db, for the home's queue.db)",
			private.Quote(db))
	}
	files := []string{private.Quote(db)}
	for _, suffix := range dbCompanions {
		if _, err := os.Lstat(db + suffix); err == nil {
			files = append(files, private.Quote(db+suffix))
		}
	}
	return fmt.Sprintf("mkdir -m 700 DIR && mv %s DIR/, then pass --db DIR/%s (or give no --db, for the home's queue.db)",
		strings.Join(files, " "), private.Quote(filepath.Base(db)))
}

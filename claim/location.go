package claim

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/queuectl/queuectl/claim/jobs"
)

// A store's location is what --db, $QUEUECTL_DB or $QUEUECTL_DB_PATH say:
// a PostgreSQL URL (EngineFor tells) or a SQLite file's path. A URL often
// carries its user's password, and many messages name the store: each
// shows it through RedactLocation, never as given.

// passwordMask stands for a password in a location shown, as
// url.URL.Redacted writes it.
const passwordMask = "xxxxx"

// RedactLocation is location as a message shows it: a SQLite file's path
// as it is; a URL, or what looks like one, without its password, whether
// in its userinfo or as a password (or sslpassword) query parameter; a
// libpq keyword=value string without its password's value. A URL that
// does not parse (a typo'd scheme, a bad port, a password with a
// character it should have encoded) is masked by its likely parts, rather
// too much than too little.
func RedactLocation(location string) string {
	switch {
	case keywordValue(location):
		return keywordPassword.ReplaceAllString(location, "${1}"+passwordMask)
	case !hasScheme(location):
		return location
	}
	// A URL parsed with a host is sound, unless an '@' is left out of its
	// userinfo: the parser took a password with a '/' for a port and path.
	if u, err := url.Parse(location); err == nil && u.Host != "" && (u.User != nil || !strings.Contains(location, "@")) {
		u.RawQuery = redactQuery(u.RawQuery)
		return u.Redacted()
	}
	return redactBroken(location)
}

// redactBroken masks the password of a URL that does not parse, or whose
// '@' may not be its userinfo's: in the query (after the first '?'), then
// between the first ':' after the scheme and the last '@'. The query goes
// first: an '@' in it (application_name=me@host) would otherwise take the
// mask over the '?' and leave its password parameter as it was.
func redactBroken(location string) string {
	if q := strings.IndexByte(location, '?'); q >= 0 {
		location = location[:q+1] + redactQuery(location[q+1:])
	}
	start := strings.IndexByte(location, ':') + 1
	for start < len(location) && location[start] == '/' {
		start++
	}
	if at := strings.LastIndexByte(location, '@'); at > start {
		if colon := strings.IndexByte(location[start:at], ':'); colon >= 0 {
			location = location[:start+colon+1] + passwordMask + location[at:]
		}
	}
	return location
}

// redactQuery masks the values of a URL query's password parameters, by
// their names as the driver decodes them (pass%77ord is password).
func redactQuery(query string) string {
	if query == "" {
		return query
	}
	params := strings.Split(query, "&")
	for i, p := range params {
		key, _, _ := strings.Cut(p, "=")
		name := key
		if unescaped, err := url.QueryUnescape(key); err == nil {
			name = unescaped
		}
		if strings.EqualFold(name, "password") || strings.EqualFold(name, "sslpassword") {
			params[i] = key + "=" + passwordMask
		}
	}
	return strings.Join(params, "&")
}

// hasScheme reports whether location begins as a URL does, with a scheme
// and a colon (RFC 3986).
func hasScheme(location string) bool {
	scheme, _, ok := strings.Cut(location, ":")
	return ok && urlScheme.MatchString(scheme)
}

var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// keywordValue reports whether location is in libpq's keyword=value form
// (host=H port=P user=U dbname=D): it begins with one of libpq's common
// keywords, or it holds white space and a word followed by '='. A file's
// path may look so only when it is relative; an absolute one never does.
func keywordValue(location string) bool {
	if hasScheme(location) || strings.HasPrefix(location, "/") {
		return false
	}
	return libpqKeyword.MatchString(location) ||
		strings.ContainsAny(location, " \t\n") && keywordPair.MatchString(location)
}

var (
	libpqKeyword    = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|connect_timeout|options|application_name)\s*=`)
	keywordPair     = regexp.MustCompile(`(^|\s)[A-Za-z_]+\s*=`)
	keywordPassword = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)
)

// CheckLocation refuses a location that would be taken for a SQLite
// file's name although it is meant as something else: a URL of another
// database, a PostgreSQL URL short of its // (postgres:/HOST), libpq's
// keyword=value form (host=H dbname=D). Open checks it; commands check it
// before they create anything in the home.
func CheckLocation(location string) error {
	scheme, rest, _ := strings.Cut(location, ":")
	switch {
	case keywordValue(location):
		return &LocationError{location, "is in libpq's keyword=value form, which queuectl would take for a SQLite file's name", urlFix}
	case !hasScheme(location) || EngineFor(location) == EnginePostgres:
		return nil
	case jobs.PostgresScheme(scheme):
		return &LocationError{location, "lacks the // of a " + strings.ToLower(scheme) + ":// URL", urlFix}
	case strings.HasPrefix(rest, "//"):
		return &LocationError{location, "is a " + scheme + ":// URL, and queuectl stores in SQLite (a file's path) or PostgreSQL (postgres://USER@HOST/DATABASE)",
			"name a SQLite file by its path, or a PostgreSQL database as " + URLForm}
	}
	return nil
}

// LocationFlag is where the hints of the engines say a command's store
// comes from. A command that opens another store as well (db copy --to)
// names its own flag in its place.
const LocationFlag = "--db (or $QUEUECTL_DB)"

// URLForm is what a PostgreSQL URL looks like, for hints.
const URLForm = "postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=disable"

const urlFix = "write it as a URL: " + URLForm

// LocationError is a store's location that queuectl cannot open as it is
// written. It is ErrInvalid; its message shows the location without its
// password (RedactLocation), and Hint says how to write it.
type LocationError struct {
	Location string // as given
	Problem  string // what is wrong, said of the location: "is …"
	Fix      string
}

func (e *LocationError) Error() string {
	return fmt.Sprintf("%v: %s %s", ErrInvalid, RedactLocation(e.Location), e.Problem)
}

// Is makes a LocationError ErrInvalid (errors.Is).
func (e *LocationError) Is(target error) bool { return target == ErrInvalid }

// Hint says how to write the location.
func (e *LocationError) Hint() string { return e.Fix }

// SameStore reports whether locations a and b name one store: two
// spellings of a SQLite file's path (one file), or two PostgreSQL URLs
// that differ only in what stays with each client: its password (a
// worker's own location is shown without it) and its pool's size
// (pool_max_conns). So a worker serves, over its socket, the
// commands of its host that name its store however they spell it.
func SameStore(a, b string) bool {
	if EngineFor(a) == EnginePostgres || EngineFor(b) == EnginePostgres {
		ka, oka := serverKey(a)
		kb, okb := serverKey(b)
		return oka && okb && ka == kb
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// serverKey is what of a PostgreSQL URL names its store: the server, the
// user, the database and every parameter but the password's and the
// pool's, in one spelling. A URL with no host (postgres:///q?host=/run/
// postgresql, a Unix socket's directory) is keyed by its parameters, the
// host among them; as with a URL with no user, what libpq's defaults fill
// in is taken to be the same for the worker and the commands of its home.
func serverKey(location string) (string, bool) {
	u, err := url.Parse(location)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", false
	}
	q := u.Query()
	for k := range q {
		if name := strings.ToLower(k); name == "password" || name == "sslpassword" || strings.HasPrefix(name, "pool_") {
			q.Del(k)
		}
	}
	host := strings.ToLower(u.Hostname())
	port := cmp.Or(u.Port(), "5432")
	return net.JoinHostPort(host, port) + "\x00" + u.User.Username() + "\x00" + u.Path + "\x00" + q.Encode(), true
}

// ReadOnlyFS reports whether the file system holding dir refuses a new
// file as read-only: mounted so, or made so by the kernel after an I/O
// error (ext4's errors=remount-ro), which neither statfs(2) nor access(2)
// tells; only a write does, so one empty file is made and removed.
func ReadOnlyFS(dir string) bool {
	f, err := os.CreateTemp(dir, ".queuectl-write-check-*")
	if err == nil {
		f.Close()
		os.Remove(f.Name())
	}
	return errors.Is(err, syscall.EROFS)
}

// NoSpace reports whether the file system holding dir has no space left
// for this user.
func NoSpace(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Bavail == 0
}

// NoInodes reports whether the file system holding dir has no inodes left
// for a new file. One that does not count them (btrfs) says 0 of 0.
func NoInodes(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Files > 0 && st.Ffree == 0
}

// DiskFullAt is the ErrDiskFull of a write to the SQLite store at path
// whose file system has no space (inodes: no inode) left: it names the
// directory, what is missing and that queuectl carries on once there is
// room, in the words every reader of it shares (run.FullDir reads the
// directory back).
func DiskFullAt(path string, inodes bool) error {
	dir, file := filepath.Dir(path), filepath.Base(path)
	if inodes {
		return fmt.Errorf("%w: %s (no inodes left for %s's WAL and index: remove files on that file system; queuectl carries on once there are some)",
			ErrDiskFull, dir, file)
	}
	return fmt.Errorf("%w: %s (no space left for %s; queuectl carries on once there is room)", ErrDiskFull, dir, file)
}

// WaitHint says what most often keeps a write to the store waiting without
// bound: another session's lock, which neither engine times out unless the
// server's statement_timeout (PostgreSQL) says so.
func (s *Store) WaitHint() string {
	if EngineFor(s.Path()) == EnginePostgres {
		return "another session may hold a lock on the queue's tables (see pg_locks and pg_stat_activity)"
	}
	return "another process may hold the database in a write transaction (an open sqlite3 shell, say: fuser " + s.Path() + " names who has it open)"
}

package pgtest

import (
	"fmt"
	"net/url"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/queuectl/queuectl/internal/testenv"
)

// Cluster is a PostgreSQL server of a test's own (initdb, pg_ctl), for
// tests that crash the server: the shared test server is never stopped.
// It listens on a unix socket in a directory of its own, and on no TCP
// port: a port free when the cluster was made is free again while the
// server is down after a crash, and a test running beside it could take
// it, so that the restarted server could not listen, or the cluster's
// clients reached another server. Its directories are removed when the
// test ends.
type Cluster struct {
	tb      testing.TB
	bin     string              // the directory of initdb and pg_ctl
	dir     string              // the data directory
	sockets string              // the directory of its socket
	cred    *syscall.Credential // the postgres user's, when the test runs as root
}

// clusterPort names the cluster's socket file (.s.PGSQL.5432): the
// directory is the cluster's own, so any number will do.
const clusterPort = 5432

// NewCluster creates and starts a cluster with settings (postgresql.conf
// lines) added to its configuration. It skips tb when initdb or pg_ctl is
// missing, and fails it instead under CI=true, where the tests must run.
func NewCluster(tb testing.TB, settings ...string) *Cluster {
	tb.Helper()
	c := &Cluster{tb: tb, bin: serverBin(tb)}
	// initdb refuses to run as root: the server runs as postgres then, in
	// a directory of its own outside tb's (which only root may enter).
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			missing(tb, "no user postgres to run the server as root")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	c.sweep()
	parent, err := os.MkdirTemp("", clusterPrefix)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(parent) })
	// Whole or not at all (a rename), for a sweep running beside.
	owner := filepath.Join(parent, ownerFile)
	if err := os.WriteFile(owner+".new", []byte(testenv.Mark()), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(owner+".new", owner); err != nil {
		tb.Fatal(err)
	}
	c.dir, c.sockets = filepath.Join(parent, "data"), filepath.Join(parent, "run")
	// A socket's path is at most 107 bytes (sun_path).
	if sock := filepath.Join(c.sockets, fmt.Sprintf(".s.PGSQL.%d", clusterPort)); len(sock) > 107 {
		tb.Fatalf("the cluster's socket path %s is longer than a socket's 107 bytes: set TMPDIR to a shorter directory", sock)
	}
	if err := os.Mkdir(c.sockets, 0o700); err != nil {
		tb.Fatal(err)
	}
	if c.cred != nil {
		for _, d := range []string{parent, c.sockets} {
			if err := os.Chown(d, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	c.run("initdb", "-D", c.dir, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync", "--no-instructions")
	conf := append([]string{
		"port = " + strconv.Itoa(clusterPort),
		"listen_addresses = ''",
		"unix_socket_directories = '" + c.sockets + "'",
		"shared_buffers = 32MB",
		"max_connections = 60",
	}, settings...)
	f, err := os.OpenFile(filepath.Join(c.dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = f.WriteString("\n" + strings.Join(conf, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	c.Start()
	tb.Cleanup(func() { c.pgctl("stop", "-m", "immediate") })
	return c
}

// clusterPrefix begins the name of each cluster's directory, in the
// temporary directory; ownerFile, in it, holds the mark of the test
// binary that made it (testenv.Mark).
const (
	clusterPrefix = "queuectl-pgtest-"
	ownerFile     = "owner"
)

// sweep stops and removes the clusters that test binaries killed before
// their cleanups ran (past go test's -timeout) left running: those whose
// owner is gone. A cluster with no owner file is left alone.
func (c *Cluster) sweep() {
	for _, dir := range clusterDirs() {
		mark, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil || !testenv.Gone(string(mark)) {
			continue
		}
		left := &Cluster{tb: c.tb, bin: c.bin, dir: filepath.Join(dir, "data"), cred: c.cred}
		left.pgctl("stop", "-m", "immediate", "-w") // fails when it is not running: nothing to stop
		os.RemoveAll(dir)
	}
}

// clusterDirs returns the clusters' directories in the temporary
// directory, of every test binary.
func clusterDirs() []string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), clusterPrefix+"*"))
	return dirs
}

// DSN is the URL of the cluster's postgres database, as its superuser,
// through its socket.
func (c *Cluster) DSN() string {
	q := url.Values{"host": {c.sockets}, "port": {strconv.Itoa(clusterPort)}, "sslmode": {"disable"}}
	return "postgres://postgres@/postgres?" + q.Encode()
}

// Start starts the server and waits until it accepts connections; after a
// crash, it first replays the WAL.
func (c *Cluster) Start() {
	c.tb.Helper()
	if out, err := c.pgctl("start", "-w", "-t", "120", "-l", filepath.Join(c.dir, "server.log")); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		c.tb.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// Crash stops the server as a crash would (pg_ctl stop -m immediate: every
// server process quits at once, without a checkpoint or a flush of the WAL
// buffers): what was committed without waiting for the flush may be gone.
func (c *Cluster) Crash() {
	c.tb.Helper()
	if out, err := c.pgctl("stop", "-m", "immediate", "-w"); err != nil {
		c.tb.Fatalf("pg_ctl stop -m immediate: %v\n%s", err, out)
	}
}

// RequirePassword makes the server ask role for its password (SCRAM) on
// the cluster's socket, ahead of the trust every other role keeps, and
// reloads the server's configuration.
func (c *Cluster) RequirePassword(role string) {
	c.tb.Helper()
	path := filepath.Join(c.dir, "pg_hba.conf")
	hba, err := os.ReadFile(path)
	if err != nil {
		c.tb.Fatal(err)
	}
	if err := os.WriteFile(path, append([]byte("local all "+role+" scram-sha-256\n"), hba...), 0o600); err != nil {
		c.tb.Fatal(err)
	}
	if out, err := c.pgctl("reload"); err != nil {
		c.tb.Fatalf("pg_ctl reload: %v\n%s", err, out)
	}
}

func (c *Cluster) pgctl(args ...string) ([]byte, error) {
	cmd := osexec.Command(filepath.Join(c.bin, "pg_ctl"), append([]string{"-D", c.dir}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	return cmd.CombinedOutput()
}

func (c *Cluster) run(name string, args ...string) {
	c.tb.Helper()
	cmd := osexec.Command(filepath.Join(c.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		c.tb.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// serverBin finds the directory of initdb and pg_ctl: on the PATH, else
// the newest under /usr/lib/postgresql (Debian's layout).
func serverBin(tb testing.TB) string {
	tb.Helper()
	if p, err := osexec.LookPath("initdb"); err == nil {
		if _, err := osexec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	missing(tb, "initdb and pg_ctl are not installed (the PostgreSQL server package)")
	return ""
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// missing skips tb for want of what it needs, or fails it under CI=true.
func missing(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s; under CI=true this test must run", why)
	}
	tb.Skipf("skipped: %s", why)
}

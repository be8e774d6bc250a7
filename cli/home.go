package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/queuectl/queuectl/front"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
)

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"}

// home is an opened queuectl home: its directories and its store.
type home struct {
	dir    string
	db     string // the database's path
	dirs   spool.Dirs
	logs   string
	store  *claim.Store
	config claim.Config
	// watched: the command checks the store's file itself (a worker,
	// run/filecheck.go), not around.
	watched bool
	// started ends the worker's start (run.Starting) once it is registered;
	// nil but for worker start.
	started func()
}

// openHomeSpool resolves --home/--db, creates the home (0700) and opens the
// store; the caller closes h.store. lenientSpool lets an unsafe spool pass, for
// status, which shows it, and worker stop, which must reach the workers
// that keep running beside one. Every other command refuses it.
func openHomeSpool(c *cli.Context, lenientSpool bool) (*home, error) {
	h, err := openHomeStore(c, lenientSpool)
	if err != nil {
		return nil, err
	}
	return h.readConfig(c)
}

// readConfig reads the config of the home, closing its store on error.
func (h *home) readConfig(c *cli.Context) (*home, error) {
	var err error
	if h.config, err = h.store.Config(c.Context); err != nil {
		h.store.Close()
		return nil, err
	}
	return h, nil
}

// openHomeStore is openHomeSpool without reading the config (h.config
// stays zero), for a command whose store calls read it themselves.
func openHomeStore(c *cli.Context, lenientSpool bool) (*home, error) {
	return openHomeWith(c, lenientSpool, claim.Open)
}

// openHomeWith is openHomeStore with the store opened by open. The home is
// checked before anything is created in it: a refused home gets nothing.
func openHomeWith(c *cli.Context, lenientSpool bool, open func(string) (*claim.Store, error)) (*home, error) {
	dir, dbPath, err := homePaths(c)
	if err != nil {
		return nil, err
	}
	h := &home{dir: dir, dirs: spool.DirsOf(dir), logs: filepath.Join(dir, "logs"), db: dbPath}
	if _, err := os.Lstat(dir); err != nil { // a home that is there is checked first
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, withHint(fmt.Errorf("create home: %w", err), "pass --home DIR on a writable disk")
		}
	} else if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		// Said here: the checks below would name a directory in it.
		return nil, withHint(fmt.Errorf("home %s is not a directory", dir), "pass --home DIR, or set QUEUECTL_HOME, naming a directory")
	}
	if err := checkHome(h, !lenientSpool); err != nil {
		return nil, err
	}
	if err := h.dirs.Make(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(h.logs, 0o700); err != nil {
		return nil, fmt.Errorf("create logs directory: %w", err)
	}
	if h.store, err = open(dbPath); err != nil {
		return nil, err
	}
	storesOpened.Add(1)
	return h, nil
}

// storesOpened counts the stores this process opened: the tests of the
// hot path (enqueue and run to a home a worker serves) check it stays 0.
var storesOpened atomic.Int64

// checkHome refuses a home, or anything in it that commands read or run
// from, that another user owns or may write to (SPEC §2): whoever can
// write there can make queuectl run commands as this user. The spool is
// checked when withSpool says so.
func checkHome(h *home, withSpool bool) error {
	return front.CheckHome(h.dir, h.db, withSpool)
}

// homePaths resolves the home directory (--home, $QUEUECTL_HOME, else
// ~/.queuectl) and the database (--db, $QUEUECTL_DB, $QUEUECTL_DB_PATH, else
// HOME/queue.db), touching neither.
func homePaths(c *cli.Context) (dir, dbPath string, err error) {
	return homePathsOf(c.String("home"), c.String("db"))
}

// homePathsOf is homePaths of the --home and --db values given. A
// database that claim.Open would refuse is refused here, before anything
// is made in the home (a libpq keyword=value string would otherwise be
// checked, and named in messages, as a file).
func homePathsOf(home, db string) (dir, dbPath string, err error) {
	dir, dbPath, err = front.HomePaths(home, db)
	if err != nil {
		return "", "", withHint(err, "set QUEUECTL_HOME or pass --home DIR")
	}
	if err := claim.CheckLocation(dbPath); err != nil {
		return "", "", err
	}
	if claim.EngineFor(dbPath) == claim.EngineSQLite {
		// a file's path, which a job, in a directory of its own, is given
		// (front.HomePaths)
		if dbPath, err = filepath.Abs(dbPath); err != nil {
			return "", "", err
		}
	}
	return dir, dbPath, nil
}

// withHome opens the home around a command's action.
func withHome(action func(c *cli.Context, h *home) error) cli.ActionFunc {
	return withHomeSpool(false, action)
}

// withStore is withHome for an action that needs no h.config: enqueue,
// whose store call (EnqueueAll) reads the config itself; reading it here
// as well cost a query and its statement's preparation.
func withStore(action func(c *cli.Context, h *home) error) cli.ActionFunc {
	return around(func(c *cli.Context) (*home, error) { return openHomeStore(c, false) }, action)
}

// withHomeSpool is withHome; lenientSpool as for openHomeSpool.
func withHomeSpool(lenientSpool bool, action func(c *cli.Context, h *home) error) cli.ActionFunc {
	return around(func(c *cli.Context) (*home, error) { return openHomeSpool(c, lenientSpool) }, action)
}

// around runs action on the home open returns, and closes its store after.
// Meanwhile the store's file is checked as a worker checks its own: when
// it is deleted or replaced (or found corrupt), action's context ends and
// the command fails, saying so, within a second (SPEC §6), rather than
// show a store that is no longer there (serve, wait, logs -f).
func around(open func(*cli.Context) (*home, error), action func(c *cli.Context, h *home) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		h, err := open(c)
		if err != nil {
			return err
		}
		defer h.store.Close()
		if h.watched {
			return action(c, h)
		}
		ctx, stop := watchStoreFile(c.Context, h.store)
		defer stop()
		parent := c.Context
		c.Context = ctx
		defer func() { c.Context = parent }()
		err = action(c, h)
		if cause := context.Cause(ctx); claim.Unusable(cause) {
			return cause
		}
		return err
	}
}

// watchStoreFile returns a context that ends, with the reason as its
// cause, once s's database file is unusable (run.WatchFile), and the
// function that stops watching: it returns once no check runs any more,
// so that the store can be closed after it.
func watchStoreFile(parent context.Context, s *claim.Store) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		run.WatchFile(ctx, s, cancel)
	}()
	return ctx, func() {
		cancel(nil)
		<-done
	}
}

// printer renders to the app's stdout, in colour only when that is a
// terminal and NO_COLOR is not set. It knows no host: runs are printed by
// runsPrinter.
func printer(c *cli.Context) report.Printer {
	noColor := os.Getenv("NO_COLOR") != "" // no-color.org: only a non-empty value
	f, isFile := c.App.Writer.(*os.File)
	color := !noColor && isFile && isatty.IsTerminal(f.Fd())
	return report.Printer{Out: c.App.Writer, JSON: c.Bool("json"), Color: color, Now: time.Now}
}

// runsPrinter is printer for what shows runs, which tells this host's
// runs from others': the host's id reads two files, which the commands
// that print no run (enqueue above all) do not pay for.
func runsPrinter(c *cli.Context) report.Printer {
	p := printer(c)
	p.Host, p.FromTail, p.Printed = run.HostID(), fromTail, printed
	return p
}

// printed says whether a stream of run r printed anything (run.Log.Printed).
func printed(r claim.Run, stderr bool) bool { return run.Log{Run: r, Stderr: stderr}.Printed() }

// fromTail says whether a stream of run r is read here from the tail kept
// with it: r ran on another host, or its log file is gone.
func fromTail(r claim.Run, stderr bool) bool {
	return run.Log{Run: r, Stderr: stderr}.Origin() == run.FromTail
}

// args checks the count of positional arguments.
func args(c *cli.Context, min, max int) ([]string, error) {
	a := c.Args().Slice()
	if len(a) < min || (max >= 0 && len(a) > max) {
		return nil, withHint(usagef("wrong number of arguments (%d)", len(a)),
			strings.TrimSpace("usage: "+c.Command.HelpName+" "+c.Command.ArgsUsage))
	}
	return a, nil
}

func logf(c *cli.Context) func(string, ...any) {
	return func(format string, a ...any) {
		fmt.Fprintf(c.App.ErrWriter, "queuectl: "+format+"\n", a...)
	}
}

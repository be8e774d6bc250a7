package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/front"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/spool"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the home, the store, the workers and the spool, and say how to fix what is wrong",
		Description: `Checks, each ok, warn or fail with the fix: the home's ownership and modes;
the store (SQLite: PRAGMA quick_check; PostgreSQL: reachable, schema current);
live workers and their heartbeats, and workers gone without a goodbye; the
spool (unsafe, files waiting, rejected files); free disk space under the home;
the volume of logs/; and the clock against PostgreSQL's. Creates nothing.
Exit status 0 when every check is ok, 1 otherwise.

Example: queuectl doctor --json | jq '.[] | select(.status != "ok")'`,
		Flags:  []cli.Flag{jsonFlag},
		Action: doctor,
	}
}

func doctor(c *cli.Context) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	dir, dbPath, err := homePaths(c)
	if err != nil {
		return err
	}
	h := &home{dir: dir, db: dbPath, dirs: spool.DirsOf(dir), logs: filepath.Join(dir, "logs")}
	checks := []report.Check{homeCheck(h)}
	_, err = os.Stat(dir)
	noHome := errors.Is(err, fs.ErrNotExist)
	if noHome && claim.EngineFor(h.db) == claim.EngineSQLite {
		return doctorVerdict(c, checks) // nothing else to look at
	}
	live := -1 // unknown without a store
	store, health, check := doctorStore(c.Context, h)
	checks = append(checks, check)
	if store != nil {
		defer store.Close()
		h.store = store
		if h.config, err = store.Config(c.Context); err != nil {
			return err
		}
		more, n := workerChecks(c.Context, h)
		checks, live = append(checks, more...), n
		checks = append(checks, clockCheck(health, h.config.Lease))
	}
	if noHome {
		// A new host of a PostgreSQL store: the store is worth checking
		// before its first worker creates the home; the home's own files
		// are not there yet.
		return doctorVerdict(c, checks)
	}
	checks = append(checks, spoolChecks(h, live)...)
	checks = append(append(checks, diskChecks(h)...), logsCheck(h))
	return doctorVerdict(c, checks)
}

// doctorVerdict prints the checks and exits 1 unless each is ok.
func doctorVerdict(c *cli.Context, checks []report.Check) error {
	if err := printer(c).Doctor(checks); err != nil {
		return err
	}
	for _, ch := range checks {
		if ch.Status != report.CheckOK {
			return &exitStatus{exitFailure, nil}
		}
	}
	return nil
}

func ok(name, format string, a ...any) report.Check {
	return report.Check{Name: name, Status: report.CheckOK, Detail: fmt.Sprintf(format, a...)}
}

// homeCheck: the home and what commands read or run from in it are the
// user's alone (the spool has its own check).
func homeCheck(h *home) report.Check {
	if _, err := os.Stat(h.dir); errors.Is(err, fs.ErrNotExist) {
		return report.Check{Name: "home", Status: report.CheckFail, Detail: h.dir + " does not exist",
			Fix: "queuectl worker start creates it (or pass --home DIR)"}
	}
	for _, p := range front.PrivatePaths(h.dir, h.db, false) {
		err := p.Check()
		var u *spool.UnsafeError
		if errors.As(err, &u) {
			return report.Check{Name: "home", Status: report.CheckFail, Detail: fmt.Sprintf("%s %s: %s", p.What, p.Path, u.Problem), Fix: u.Fix}
		}
		if err != nil {
			return report.Check{Name: "home", Status: report.CheckFail, Detail: err.Error(), Fix: "ls -ld " + p.Path}
		}
	}
	return ok("home", "%s and what is in it are private to you (the spool: its own check)", h.dir)
}

// doctorStore opens the store (which migrates an older schema, as every
// command does) and checks its integrity.
func doctorStore(ctx context.Context, h *home) (*claim.Store, claim.Health, report.Check) {
	fail := func(detail, fix string) (*claim.Store, claim.Health, report.Check) {
		return nil, claim.Health{}, report.Check{Name: "store", Status: report.CheckFail, Detail: detail, Fix: fix}
	}
	if claim.EngineFor(h.db) == claim.EngineSQLite {
		if _, err := os.Stat(h.db); errors.Is(err, fs.ErrNotExist) {
			return fail(claim.RedactLocation(h.db)+" does not exist", "queuectl worker start creates it (or pass --db)")
		}
	}
	s, err := claim.Open(h.db)
	if err != nil {
		fix := "check --db and $QUEUECTL_DB"
		var hinted interface{ Hint() string }
		if errors.As(err, &hinted) {
			fix = hinted.Hint()
		}
		return fail(fmt.Sprintf("cannot open %s: %v", claim.RedactLocation(h.db), err), fix)
	}
	health, err := s.Health(ctx)
	restore := "stop the workers, then restore a backup: queuectl db restore FILE (a file of queuectl db backup)"
	if claim.EngineFor(h.db) == claim.EnginePostgres {
		restore = "restore the database from your PostgreSQL backup (pg_restore), or see whether the server is healthy"
	}
	switch {
	case err != nil:
		s.Close()
		return fail(fmt.Sprintf("%s: %v", s.Path(), err), restore)
	case len(health.Problems) > 0:
		return s, health, report.Check{Name: "store", Status: report.CheckFail,
			Detail: fmt.Sprintf("%s: quick_check found %d problem(s), the first: %s", s.Path(), len(health.Problems), health.Problems[0]),
			Fix:    restore + "; or sqlite3 .recover into a new file"}
	case health.Schema != health.Latest:
		return s, health, report.Check{Name: "store", Status: report.CheckFail,
			Detail: fmt.Sprintf("%s: schema version %d, this queuectl's is %d", s.Path(), health.Schema, health.Latest),
			Fix:    "run this queuectl's worker once to migrate it"}
	}
	what := "quick_check ok"
	if claim.EngineFor(h.db) == claim.EnginePostgres {
		what = "reachable"
	}
	return s, health, ok("store", "%s: %s, schema version %d (current)", s.Path(), what, health.Schema)
}

// clockCheck compares this host's clock with PostgreSQL's, as health read
// it: leases and run_at are read against the store's times, which every
// host writes.
func clockCheck(health claim.Health, lease time.Duration) report.Check {
	if health.ServerTime.IsZero() {
		return ok("clock", "SQLite shares this host's clock")
	}
	skew := time.Since(health.ServerTime).Round(time.Millisecond)
	c := report.Check{Name: "clock", Detail: fmt.Sprintf("this host is %v off the PostgreSQL server's clock", skew.Abs())}
	switch {
	case skew.Abs() > lease/2:
		c.Status = report.CheckFail
	case skew.Abs() > time.Second:
		c.Status = report.CheckWarn
	default:
		c.Status = report.CheckOK
		return c
	}
	c.Fix = "synchronize the clocks (timedatectl set-ntp true, or chrony) on every host"
	return c
}

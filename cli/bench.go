package cli

import (
	"fmt"
	"github.com/queuectl/queuectl/front"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/bench"
	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/urfave/cli/v2"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure throughput, ingestion, latency, scale and footprint against this machine's limits",
		Description: `Runs each scenario on scratch homes and holds it against a limit measured in the
same run (a bare loop doing the same work) or a fixed target. Takes a few minutes; --only picks
scenarios: throughput, ingest, latency, scale, footprint.

With --db postgres://USER@HOST/DATABASE, every scenario runs the same on that server instead: its
store is a scratch database that bench creates (the user needs the CREATEDB right) and drops at
the end; in the latency scenario, enqueue runs from another home, as from another host, so that
the job reaches the worker through NOTIFY. $QUEUECTL_DB is not used: only --db picks a server.

Example: queuectl bench --jobs 10000 --slots 4
         queuectl bench --db postgres://postgres@db1/postgres --only latency --only scale`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Value: 10000, Usage: "`N` jobs and spool files for throughput and ingestion"},
			&cli.IntFlag{Name: "slots", Value: 4, Usage: "`N` worker slots for throughput"},
			&cli.IntFlag{Name: "scale", Value: 1000000, Usage: "`N` queued jobs in the large store"},
			&cli.IntFlag{Name: "samples", Value: 200, Usage: "`N` latency samples per door"},
			&cli.StringSliceFlag{Name: "only", Usage: "run only scenario `S` (repeatable)"},
			&cli.StringFlag{Name: "dir", Usage: "make the scratch homes in a new directory in `DIR`, created if missing (default: a temporary directory)"},
			&cli.BoolFlag{Name: "keep", Usage: "leave the scratch homes (hundreds of MB) and say where; without it they are removed at the end"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			exe, err := benchExe()
			if err != nil {
				return err
			}
			dir := c.String("dir")
			if dir == "" {
				if dir, err = os.MkdirTemp("", "queuectl-bench-"); err != nil {
					return err
				}
			} else if err := os.MkdirAll(dir, 0o700); err != nil {
				return withHint(fmt.Errorf("create bench directory: %w", err), "pass --dir DIR on a writable disk")
			}
			before, err := os.ReadDir(dir)
			if err != nil {
				return err
			}
			defer scratchLeft(c, dir, before, c.String("dir") == "")
			b := &bench.Suite{Exe: exe, Dir: dir, Jobs: c.Int("jobs"), Slots: c.Int("slots"), Scale: c.Int("scale"),
				Samples: c.Int("samples"), Only: c.StringSlice("only"), DB: c.String("db"), Log: logf(c)}
			if b.DB != "" {
				if err := claim.CanScratch(b.DB); err != nil {
					return withHint(err, "bench makes its own stores: SQLite files in scratch homes without --db, scratch databases on the server of a --db postgres://USER@HOST/DATABASE")
				}
			}
			results, err := b.Run(c.Context)
			if len(results) == 0 && err != nil {
				return err
			}
			rows := make([]report.BenchRow, len(results))
			for i, r := range results {
				rows[i] = report.BenchRow(r)
			}
			return firstErr(printer(c).Bench(rows), err)
		},
	}
}

// scratchLeft says how much the bench leaves on disk and where, or (without
// --keep) removes it: the entries of dir that were not in before, or dir
// itself when it was a temporary directory of this run.
func scratchLeft(c *cli.Context, dir string, before []os.DirEntry, temporary bool) {
	var made []string
	for _, e := range mustReadDir(dir) {
		if !slices.ContainsFunc(before, func(b os.DirEntry) bool { return b.Name() == e.Name() }) {
			made = append(made, filepath.Join(dir, e.Name()))
		}
	}
	if temporary {
		made = []string{dir}
	}
	var size int64
	for _, p := range made {
		size += diskUsage(p)
	}
	amount := fmt.Sprintf("%.0f MB", float64(size)/1e6)
	if size < 1e6 {
		amount = fmt.Sprintf("%d kB", size/1000)
	}
	switch {
	case len(made) == 0:
	case c.Bool("keep"):
		logf(c)("bench: left %s of scratch homes in %s; remove them with: rm -rf %s", amount, strings.Join(made, " "), strings.Join(made, " "))
	default:
		for _, p := range made {
			if err := os.RemoveAll(p); err != nil {
				logf(c)("bench: remove %s: %v", p, err)
			}
		}
		logf(c)("bench: removed %s of scratch homes from %s (--keep leaves them)", amount, dir)
	}
}

func mustReadDir(dir string) []os.DirEntry {
	es, _ := os.ReadDir(dir)
	return es
}

// diskUsage sums the sizes of the files under path.
func diskUsage(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// benchExe is the program the bench runs: queuectl as users run it, the
// front program beside this one when this is queuectl-full.
func benchExe() (string, error) {
	exe, err := os.Executable()
	if err != nil || filepath.Base(exe) != front.FullName {
		return exe, err
	}
	if fi, err := os.Stat(filepath.Join(filepath.Dir(exe), "queuectl")); err == nil && !fi.IsDir() {
		return filepath.Join(filepath.Dir(exe), "queuectl"), nil
	}
	return exe, nil
}

package cli

import (
	"os"

	"github.com/queuectl/queuectl/bench"
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

Example: queuectl bench --jobs 10000 --slots 4`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Value: 10000, Usage: "`N` jobs and spool files for throughput and ingestion"},
			&cli.IntFlag{Name: "slots", Value: 4, Usage: "`N` worker slots for throughput"},
			&cli.IntFlag{Name: "scale", Value: 1000000, Usage: "`N` queued jobs in the large store"},
			&cli.IntFlag{Name: "samples", Value: 200, Usage: "`N` latency samples per door"},
			&cli.StringSliceFlag{Name: "only", Usage: "run only scenario `S` (repeatable)"},
			&cli.StringFlag{Name: "dir", Usage: "keep the scratch homes, in a new directory in `DIR` (default: a temporary directory, removed)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			dir := c.String("dir")
			if dir == "" {
				if dir, err = os.MkdirTemp("", "queuectl-bench-"); err != nil {
					return err
				}
				defer os.RemoveAll(dir)
			}
			b := &bench.Suite{Exe: exe, Dir: dir, Jobs: c.Int("jobs"), Slots: c.Int("slots"), Scale: c.Int("scale"),
				Samples: c.Int("samples"), Only: c.StringSlice("only"), Log: logf(c)}
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

package cli

import (
	"fmt"

	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/spool"
	"github.com/urfave/cli/v2"
)

func rejectedCommand() *cli.Command {
	return &cli.Command{
		Name:        "rejected",
		Usage:       "spool files that could not become jobs: list, retry, purge",
		Description: "Example: queuectl rejected list",
		Subcommands: []*cli.Command{{
			Name:        "list",
			Usage:       "list the files in rejected/ with their size, age and reason",
			Description: "Example: queuectl rejected list --json | jq -r '.[].name'",
			Flags:       []cli.Flag{jsonFlag},
			Action: withHome(func(c *cli.Context, h *home) error {
				if _, err := args(c, 0, 0); err != nil {
					return err
				}
				files, err := spool.ListRejected(h.dirs)
				if err != nil {
					return err
				}
				out := make([]report.RejectedFile, len(files))
				for i, f := range files {
					out[i] = report.RejectedFile{Name: f.Name, Size: f.Size, At: f.At, Reason: f.Reason, Fix: f.Fix}
				}
				return printer(c).Rejected(out)
			}),
		}, {
			Name:      "retry",
			Usage:     "move fixed files back into spool/ to be ingested again",
			ArgsUsage: "NAME...",
			Description: `Moves each rejected/NAME back to spool/NAME and removes its reason; a file
of that name already in spool/ is never replaced (exit 4).

Example: $EDITOR ~/.queuectl/rejected/job.json && queuectl rejected retry job.json`,
			Action: withHome(func(c *cli.Context, h *home) error {
				return eachName(c, "Retrying", func(name string) error { return spool.RetryRejected(h.dirs, name) })
			}),
		}, {
			Name:        "purge",
			Usage:       "delete rejected files and their reasons",
			ArgsUsage:   "NAME...",
			Description: "Example: queuectl rejected purge job.json",
			Action: withHome(func(c *cli.Context, h *home) error {
				return eachName(c, "Purged", func(name string) error { return spool.PurgeRejected(h.dirs, name) })
			}),
		}},
	}
}

// eachName applies fn to every NAME argument, saying "<done> NAME" for each
// that worked; errors as eachID (an unknown name exits 3).
func eachName(c *cli.Context, done string, fn func(string) error) error {
	names, err := args(c, 1, -1)
	if err != nil {
		return err
	}
	return eachID(c, names, func(name string) error {
		if err := fn(name); err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "%s rejected file %s\n", done, spool.ShowName(name))
		return nil
	})
}

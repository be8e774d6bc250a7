package cli

import (
	"github.com/queuectl/queuectl/spool"
	"github.com/urfave/cli/v2"
)

func watchCommand() *cli.Command {
	return &cli.Command{
		Name:        "watch",
		Usage:       "ingest the spool directory until interrupted, without running jobs",
		Description: "Example: queuectl watch",
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			err := newWatcher(c, h).Run(c.Context)
			if c.Context.Err() != nil {
				return nil
			}
			return err
		}),
	}
}

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:        "ingest",
		Usage:       "ingest the spool directory once and exit (for cron)",
		Description: "Example (crontab): * * * * * queuectl ingest",
		Flags:       []cli.Flag{jsonFlag},
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			if err := spool.CheckSpool(h.dirs.Spool); err != nil {
				return err
			}
			st, err := newWatcher(c, h).Pass(c.Context)
			if err != nil {
				return err
			}
			logf(c)("ingested %d, rejected %d, still being written %d", st.Ingested+st.Redriven, st.Rejected, st.Waiting)
			return nil
		}),
	}
}

func newWatcher(c *cli.Context, h *home) *spool.Watcher {
	return &spool.Watcher{Dirs: h.dirs, Store: h.store, Rescan: h.config.SpoolRescan, Log: logf(c)}
}

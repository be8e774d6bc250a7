package cli

import (
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/spool"
	"github.com/urfave/cli/v2"
)

func watchCommand() *cli.Command {
	return &cli.Command{
		Name:  "watch",
		Usage: "ingest the spool directory until interrupted, without running jobs",
		Description: `Prints a line on stderr for each file ingested, skipped or rejected
(--quiet: only warnings; --log-format json: one JSON object a line).

Example: queuectl watch --log-format json`,
		Flags: logFlags(),
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			if err := spool.CheckSpool(h.dirs.Spool); err != nil {
				return err
			}
			log, err := newEventLog(c)
			if err != nil {
				return err
			}
			defer log.close()
			err = newWatcher(h, log).Run(c.Context)
			if c.Context.Err() != nil {
				err = nil
			}
			if err == nil {
				log.say("stop", "stopped watching spool %s", h.dirs.Spool)
			}
			return err
		}),
	}
}

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:  "ingest",
		Usage: "ingest the spool directory once and exit (for cron)",
		Description: `Prints a line for each file ingested, skipped or rejected and a summary, and
nothing when the spool was empty (so cron mails only when something happened); -q: only
warnings, such as a rejected file (not a file left alone for not being *.json, which is said
each run without -q); --json: the counts on stdout.

Example (crontab): * * * * * $HOME/go/bin/queuectl ingest -q
(cron's PATH is /usr/bin:/bin: give queuectl's full path, as command -v queuectl prints it)`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only warnings, such as rejected files"},
			jsonFlag,
		},
		Action: withHome(func(c *cli.Context, h *home) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			if err := spool.CheckSpool(h.dirs.Spool); err != nil {
				return err
			}
			log := &eventLog{w: c.App.ErrWriter, quiet: c.Bool("quiet")}
			defer log.close()
			st, err := newWatcher(h, log).Pass(c.Context)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printer(c).Ingested(report.IngestStats{Ingested: st.Ingested, Redriven: st.Redriven, Skipped: st.Skipped,
					Duplicates: st.Duplicates, Rejected: st.Rejected, Waiting: st.Waiting})
			}
			if st.Ingested+st.Redriven+st.Skipped+st.Rejected+st.Duplicates > 0 {
				log.say("ingested", "ingested %d, re-drove %d, skipped %d, rejected %d; %d still being written",
					st.Ingested, st.Redriven, st.Skipped, st.Rejected, st.Waiting)
			}
			return nil
		}),
	}
}

func newWatcher(h *home, log *eventLog) *spool.Watcher {
	return &spool.Watcher{Dirs: h.dirs, Store: h.store, Rescan: h.config.SpoolRescan, Events: log.spool}
}

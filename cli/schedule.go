package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/spool"
	"github.com/urfave/cli/v2"
)

func scheduleCommand() *cli.Command {
	return &cli.Command{
		Name:  "schedule",
		Usage: "recurring jobs: add, list, rm, pause, resume",
		Description: `A schedule makes one job at each due time of its cron expression, with
unique_key schedule:NAME: while the last one is still pending, running or retrying, a due time
is skipped. Every running worker fires schedules; a due time missed while none ran fires once
when one starts. Schedules can also be files: schedules/NAME.json in the home.

Example: queuectl schedule add nightly-db --cron '0 3 * * *' --tz Europe/Berlin --command 'pg_dump app > /backup/app.sql'`,
		Subcommands: []*cli.Command{{
			Name:      "add",
			Usage:     "add a schedule",
			ArgsUsage: "NAME",
			Description: `Cron syntax: 5 fields (minute hour day-of-month month day-of-week) or @hourly,
@daily, @weekly, @monthly, @yearly, "@every 10m". The job is --command with the job flags, or
a job spec file (-f) without id, unique_key, run_at or delay.

Example: queuectl schedule add nightly-db --cron '0 3 * * *' --command 'pg_dump app > /backup/app.sql' --timeout 1h`,
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "cron", Usage: "when it runs: `EXPR`, e.g. '0 3 * * *' or @hourly"},
				&cli.StringFlag{Name: "tz", Usage: "read the cron expression in time zone `ZONE` (default: local time)"},
				&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the job spec from `FILE`"},
				&cli.StringFlag{Name: "command", Aliases: []string{"c"}, Usage: "shell `CMD` to run"},
			}, scheduleJobFlags()...),
			Action: withHome(scheduleAdd),
		}, {
			Name:        "list",
			Usage:       "list schedules: next due time, last job and its state, last due time that made no job and why (overlap, missed, refused)",
			Description: "Example: queuectl schedule list --json",
			Flags:       []cli.Flag{jsonFlag},
			Action: withHome(func(c *cli.Context, h *home) error {
				if _, err := args(c, 0, 0); err != nil {
					return err
				}
				// Read schedules/ first, so that the list says what the
				// files say even while no worker runs. A schedule whose
				// file was just removed is not listed; it stays in the
				// store for the grace, in case the removal is an editor's
				// save (spool.ScheduleDir.Grace), and goes after it.
				sd := &spool.ScheduleDir{Dirs: h.dirs, Store: h.store, Log: logf(c)}
				if err := sd.Pass(c.Context); err != nil {
					logf(c)("schedules/: %v", err)
				}
				list, err := h.store.Schedules(c.Context)
				if err != nil {
					return err
				}
				list = slices.DeleteFunc(list, func(sc claim.Schedule) bool { return slices.Contains(sd.Missing(), sc.Name) })
				return printer(c).Schedules(list)
			}),
		}, {
			Name:        "rm",
			Usage:       "remove schedules (the jobs they made stay)",
			ArgsUsage:   "NAME...",
			Description: "Example: queuectl schedule rm nightly-db",
			Action: withHome(func(c *cli.Context, h *home) error {
				names, err := args(c, 1, -1)
				if err != nil {
					return err
				}
				return eachID(c, names, func(name string) error {
					if err := h.store.RemoveSchedule(c.Context, name); err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "Removed schedule %s\n", name)
					return nil
				})
			}),
		},
			schedulePauseCommand("pause", true),
			schedulePauseCommand("resume", false),
		},
	}
}

func schedulePauseCommand(name string, paused bool) *cli.Command {
	usage, done := "stop making jobs (running ones go on)", "Paused"
	if !paused {
		usage, done = "make jobs again, from the next due time on", "Resumed"
	}
	return &cli.Command{
		Name:        name,
		Usage:       usage,
		ArgsUsage:   "NAME...",
		Description: "Example: queuectl schedule " + name + " nightly-db",
		Action: withHome(func(c *cli.Context, h *home) error {
			names, err := args(c, 1, -1)
			if err != nil {
				return err
			}
			return eachID(c, names, func(n string) error {
				sc, changed, err := h.store.PauseSchedule(c.Context, n, paused)
				switch {
				case err != nil:
					return err
				case !changed && paused:
					fmt.Fprintf(c.App.Writer, "Schedule %s was paused already\n", n)
				case !changed:
					fmt.Fprintf(c.App.Writer, "Schedule %s was not paused\n", n)
				case paused:
					fmt.Fprintf(c.App.Writer, "%s schedule %s\n", done, n)
				default:
					fmt.Fprintf(c.App.Writer, "%s schedule %s, next due %s\n", done, n, sc.NextDue.Local().Format("2006-01-02 15:04 MST"))
				}
				return nil
			})
		}),
	}
}

func scheduleAdd(c *cli.Context, h *home) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	if c.String("cron") == "" {
		return withHint(usagef("--cron is missing: say when the job runs"), `queuectl schedule add NAME --cron '0 3 * * *' --command 'make backup'`)
	}
	if c.IsSet("file") == c.IsSet("command") {
		return withHint(usagef("give the job with --command or -f FILE"),
			`queuectl schedule add NAME --cron '0 3 * * *' --command 'make backup'`)
	}
	var nj claim.NewJob
	if c.IsSet("command") {
		nj, err = jobFromFlags(c, c.String("command"))
	} else {
		for _, f := range scheduleJobFlags() {
			if name := f.Names()[0]; c.IsSet(name) {
				return withHint(usagef("--%s goes with --command; a job spec file carries its own fields", name),
					`put it in the file: {"command": "make backup", "priority": 3}`)
			}
		}
		nj, err = jobFromFile(c.String("file"))
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(h.dirs.Schedules, a[0]+".json")); err == nil {
		return fmt.Errorf("%w: schedules/%s.json defines a schedule of that name; edit the file, or pick another name", claim.ErrConflict, a[0])
	}
	sc, err := h.store.AddSchedule(c.Context, claim.NewSchedule{Name: a[0], Cron: c.String("cron"), TZ: c.String("tz"), Job: nj})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "Added schedule %s, next due %s\n", sc.Name, sc.NextDue.Local().Format("2006-01-02 15:04 MST"))
	return nil
}

// scheduleJobFlags are enqueue's job flags (jobFlags) that a schedule's
// jobs may carry: not those that name one job (id, unique_key, after) or
// its time, which the schedule sets.
func scheduleJobFlags() []cli.Flag {
	return slices.DeleteFunc(jobFlags(), func(f cli.Flag) bool {
		return slices.Contains([]string{"id", "run-at", "delay", "unique-key", "after"}, f.Names()[0])
	})
}

// jobFromFile reads one job spec from path.
func jobFromFile(path string) (claim.NewJob, error) {
	f, err := os.Open(path)
	if err != nil {
		return claim.NewJob{}, fmt.Errorf("%w: %v", claim.ErrInvalid, err)
	}
	defer f.Close()
	data, err := readInput(f, path)
	if err != nil {
		return claim.NewJob{}, err
	}
	return claim.ParseSpec(data)
}

package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/run"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:        "config",
		Usage:       "read and change settings (stored in the database)",
		Description: "Example: queuectl config set max-retries 5",
		Subcommands: []*cli.Command{{
			Name:        "get",
			Usage:       "print one setting's value, or all settings",
			ArgsUsage:   "[KEY]",
			Description: "Example: queuectl config get max-retries",
			Flags:       []cli.Flag{jsonFlag},
			Action: withHome(func(c *cli.Context, h *home) error {
				a, err := args(c, 0, 1)
				if err != nil || len(a) == 0 {
					return firstErr(err, configList(c, h))
				}
				key, _, err := claim.LookupConfigKey(a[0])
				if err != nil {
					return err
				}
				vals, err := h.store.ConfigValues(c.Context)
				if err != nil {
					return err
				}
				for _, v := range vals {
					if v.Key == key.Name {
						return printer(c).ConfigValue(v)
					}
				}
				return nil
			}),
		}, {
			Name:      "set",
			Usage:     "change a setting",
			ArgsUsage: "KEY VALUE",
			Description: `Example: queuectl config set max-backoff 10m

The limit-* keys apply to each process of a job, as rlimits do: under
limit-cpu 2s, a job of four processes may use 2s of CPU in each of them.
Running workers read the settings again at each heartbeat and use them from
their next run on; lease, heartbeat-interval, poll-interval and spool-rescan
apply once a worker starts again. queuectl config list shows every key.`,
			Action: withHome(func(c *cli.Context, h *home) error {
				a, err := args(c, 2, 2)
				if err != nil {
					return err
				}
				key, value, err := h.store.SetConfig(c.Context, a[0], a[1])
				if err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "%s = %s\n", key, value)
				sayWhenWorkersApply(c, h, key)
				return nil
			}),
		}, {
			Name:        "list",
			Usage:       "list every setting with its value and default",
			Description: "Example: queuectl config list --json",
			Flags:       []cli.Flag{jsonFlag},
			Action:      withHome(configList),
		}},
	}
}

func configList(c *cli.Context, h *home) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	vals, err := h.store.ConfigValues(c.Context)
	if err != nil {
		return err
	}
	return printer(c).Config(vals)
}

// sayWhenWorkersApply tells, on stderr, when the live workers apply a
// changed key: within a heartbeat, or (the keys that pace a worker's own
// loops) once each starts again. An enqueue reads the config itself.
func sayWhenWorkersApply(c *cli.Context, h *home, key string) {
	live, err := liveWorkers(c.Context, h)
	if err != nil || len(live) == 0 {
		return
	}
	switch {
	case run.EnqueueKey(key):
		fmt.Fprintf(c.App.ErrWriter, "queuectl: %s applies to the jobs enqueued from now on\n", key)
	case run.StartKey(key):
		fmt.Fprintf(c.App.ErrWriter, "queuectl: %d running worker(s) keep the old %s until they start again (queuectl worker stop --wait, then start)\n", len(live), key)
	default:
		fmt.Fprintf(c.App.ErrWriter, "queuectl: %d running worker(s) apply it within a heartbeat, from their next run on\n", len(live))
	}
}

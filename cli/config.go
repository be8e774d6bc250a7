package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/run"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:        "config",
		Usage:       "read and change settings (stored in the database)",
		Description: "Example: queuectl config set max-retries 5\n\n" + settingsHelp(),
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
their next run on (log-retention and env-retention at once); lease, heartbeat-interval, poll-interval and spool-rescan
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

// settingsHelp lists every key with its default and what it does, so that
// config --help, queuectl-config(1) and docs/commands.md name them all.
func settingsHelp() string {
	var b strings.Builder
	b.WriteString("The settings, with their defaults (durations: Go syntax or whole seconds; config list shows\n" +
		"the values in force):\n")
	const keyWidth, defWidth, width = 20, 6, 80
	for _, k := range claim.ConfigKeys {
		def := k.Default
		if def == "" {
			def = "none"
		}
		line := fmt.Sprintf("   %-*s%-*s", keyWidth, k.Name, defWidth, def)
		for _, word := range strings.Fields(k.Help) {
			if len(line)+1+len(word) > width && len(strings.TrimSpace(line)) > len(k.Name)+len(def)+1 {
				b.WriteString(strings.TrimRight(line, " ") + "\n")
				line = strings.Repeat(" ", 3+keyWidth+defWidth)
			}
			if !strings.HasSuffix(line, "  ") {
				line += " "
			}
			line += word
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
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
	case run.RetentionKey(key):
		fmt.Fprintf(c.App.ErrWriter, "queuectl: %d running worker(s) apply it within a heartbeat\n", len(live))
	case run.StartKey(key):
		fmt.Fprintf(c.App.ErrWriter, "queuectl: %d running worker(s) keep the old %s until they start again (queuectl worker stop --wait, then start)\n", len(live), key)
	default:
		fmt.Fprintf(c.App.ErrWriter, "queuectl: %d running worker(s) apply it within a heartbeat, from their next run on\n", len(live))
	}
}

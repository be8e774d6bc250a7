package cli

import (
	"fmt"

	"github.com/queuectl/queuectl/claim"
	"github.com/urfave/cli/v2"
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
				for _, v := range vals {
					if v.Key == key.Name {
						fmt.Fprintln(c.App.Writer, v.Value)
					}
				}
				return err
			}),
		}, {
			Name:      "set",
			Usage:     "change a setting",
			ArgsUsage: "KEY VALUE",
			Description: `Example: queuectl config set max-backoff 10m

The limit-* keys apply to each process of a job, as rlimits do: under
limit-cpu 2s, a job of four processes may use 2s of CPU in each of them.
queuectl config list shows every key.`,
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

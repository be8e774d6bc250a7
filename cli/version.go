package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/queuectl/queuectl/front"
)

// versionText is what `queuectl version` and `--version` print
// (front.VersionText: the front program prints it too).
func versionText() string { return front.VersionText() }

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:        "version",
		Usage:       "print the version, the commit it was built from and its date",
		Description: "Same as queuectl --version.\n\nExample: queuectl version",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			_, err := fmt.Fprintf(c.App.Writer, "queuectl version %s\n", versionText())
			return err
		},
	}
}

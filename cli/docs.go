package cli

import (
	"context"

	"github.com/urfave/cli/v2"
)

// Definition returns the commands as `queuectl --help` shows them, for the
// man page and command reference generator (internal/gendocs): each
// command's help, man page and docs entry come from this one definition.
// Nothing in it runs; its Actions are not meant to be called.
func Definition() *cli.App {
	return newApp(context.Background())
}

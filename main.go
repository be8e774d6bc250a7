// Command queuectl runs shell jobs in the background: jobs arrive as JSON
// files dropped in a spool directory or through `queuectl enqueue`, wait in
// the store, and run in `queuectl worker start` processes. See README.md;
// every command is defined in package cli.
package main

import (
	"context"
	"os"

	"github.com/queuectl/queuectl/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
}

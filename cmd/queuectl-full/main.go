// Command queuectl-full is the whole queuectl program: every command is
// defined in package cli. Users run it through queuectl (the module's root
// command), which runs it for every call it does not serve itself; run
// directly, it behaves the same.
package main

import (
	"context"
	"os"

	"github.com/queuectl/queuectl/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
}

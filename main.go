// Command queuectl runs shell jobs in the background: jobs arrive as JSON
// files dropped in a spool directory or through `queuectl enqueue`, wait in
// the store, and run in `queuectl worker start` processes. See README.md.
//
// This is the small program users run (package front): it hands `enqueue`
// and `run` to a running worker itself, and runs queuectl-full
// (cmd/queuectl-full), installed beside it, for everything else.
package main

import (
	"os"

	"github.com/queuectl/queuectl/front"
)

func main() {
	os.Exit(front.Main(os.Args))
}

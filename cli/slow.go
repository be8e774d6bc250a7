package cli

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
)

// slowAfter is how long a write of the command's waits for the store
// before the command says it waits.
const slowAfter = 5 * time.Second

// saySlow says once on stderr, if the store has not answered a write of the
// command within slowAfter, that it still waits and what may hold it: a
// write behind another session's lock waits without bound, and a command
// that waits without a word looks hung. Call the returned func once the
// store answered.
func saySlow(c *cli.Context, h *home) (answered func()) {
	t := time.AfterFunc(slowAfter, func() {
		fmt.Fprintf(c.App.ErrWriter, "queuectl: the store has not answered in %v; still waiting: %s. Ctrl-C gives up\n",
			slowAfter, h.store.WaitHint())
	})
	return func() { t.Stop() }
}

package run

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// fileCheckInterval is how often a worker checks that its database file is
// still the one at the path. An idle worker would otherwise never find out:
// its connection reads on from the old file, which has nothing to claim.
const fileCheckInterval = 250 * time.Millisecond

// watchFile stops the worker once its database file has been deleted or
// replaced (SPEC §6: within a second).
func (w *Worker) watchFile(soft context.Context, stop context.CancelFunc) {
	t := time.NewTicker(fileCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-soft.Done():
			return
		case <-t.C:
		}
		if err := w.Store.CheckFile(); claim.Unusable(err) {
			w.fail(err, stop)
			return
		}
	}
}

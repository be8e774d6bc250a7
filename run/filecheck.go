package run

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// fileCheckInterval is how often a process checks that its database file
// is still the one at the path. An idle worker would otherwise never find
// out: its connection reads on from the old file, which has nothing to
// claim.
const fileCheckInterval = 250 * time.Millisecond

// WatchFile checks s's database file until ctx ends, and calls gone with
// the reason once the file is unusable: deleted, replaced or corrupt
// (SPEC §6: noticed within a second). Every long-running command does.
func WatchFile(ctx context.Context, s *claim.Store, gone func(error)) {
	t := time.NewTicker(fileCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.CheckFile(); claim.Unusable(err) {
			gone(err)
			return
		}
	}
}

// watchFile stops the worker once its database file is unusable.
func (w *Worker) watchFile(soft context.Context, stop context.CancelFunc) {
	WatchFile(soft, w.Store, func(err error) { w.fail(err, stop) })
}

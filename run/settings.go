package run

import (
	"context"
	"slices"

	"github.com/queuectl/queuectl/claim"
)

// A running worker reads the configuration again at every heartbeat, so
// that `config set` reaches it within a heartbeat interval: what its runs
// use (hooks, hook-timeout, the limit-* keys, stop-timeout, max-backoff)
// applies from its next run, or its next run's end, on; log- and
// env-retention at once (retentionKeys): one set to a week is not left
// to the next clean-up, ten minutes on (pruneInterval). The keys that pace
// the worker's own loops are read once, when it starts (startKeys). The
// keys an enqueue uses are fixed on each job as it is enqueued
// (enqueueKeys).

var (
	// startKeys are the keys a worker reads only when it starts.
	startKeys = []string{"lease", "heartbeat-interval", "poll-interval", "spool-rescan"}
	// enqueueKeys are the keys each enqueue reads, for the job it stores.
	enqueueKeys = []string{"max-retries", "backoff-base", "job-timeout"}
	// retentionKeys are the keys a worker applies at once: it prunes.
	retentionKeys = []string{"log-retention", "env-retention"}
)

// StartKey reports whether a running worker keeps key's value until it
// starts again.
func StartKey(key string) bool { return slices.Contains(startKeys, key) }

// RetentionKey reports whether a running worker applies key at once, not
// from its next run on.
func RetentionKey(key string) bool { return slices.Contains(retentionKeys, key) }

// EnqueueKey reports whether key is fixed on each job as it is enqueued,
// not read by the worker that runs it.
func EnqueueKey(key string) bool { return slices.Contains(enqueueKeys, key) }

// settings is the configuration as the worker read it last.
func (w *Worker) settings() claim.Config {
	if c := w.live.Load(); c != nil {
		return *c
	}
	return w.Config
}

// reload reads the configuration again (Reload) and, when a key changed,
// keeps it and says which. It waits at most a heartbeat interval, as a
// renewal does: a connection that hangs must not hold up the next one. A
// store that does not answer leaves the settings as they were (the
// heartbeat says when the store is away).
func (w *Worker) reload(ctx context.Context) {
	if w.Reload == nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, w.Config.HeartbeatInterval)
	defer cancel()
	c, err := w.Reload(rctx)
	if err != nil {
		return
	}
	// A key only an enqueue reads is no news of the worker's.
	changed := slices.DeleteFunc(c.Changed(w.settings()), EnqueueKey)
	if len(changed) == 0 {
		return
	}
	w.live.Store(&c)
	w.emit(Event{Kind: EventSettings, Settings: changed})
	if slices.ContainsFunc(changed, RetentionKey) {
		select {
		case w.pruneNow <- struct{}{}:
		default: // one is owed already, or no prune runs (nil)
		}
	}
}

package claim

import (
	"context"
	"time"
)

// Health is what a store says of its database, for `queuectl doctor`.
type Health struct {
	// Problems are what the engine's integrity check found (SQLite's
	// PRAGMA quick_check); none when the database is sound.
	Problems []string
	// Schema is the database's schema version; Latest the version this
	// binary migrates to. Open refuses a newer schema and migrates an
	// older one, so they differ only when a migration was undone.
	Schema, Latest int
	// ServerTime is the database server's clock, read now; zero for an
	// embedded database, which shares this host's clock.
	ServerTime time.Time
}

// Health checks the database: its integrity, its schema version and the
// server's clock. SQLite's check reads every page of the file, so it takes
// as long as reading the database once; it changes nothing.
func (s *Store) Health(ctx context.Context) (Health, error) {
	return s.engine.Health(ctx)
}

// DueSince returns, for each queue with a job due (pending or failed, its
// run_after passed, no dependency left), when the job the claim would take
// next from that queue became due: how long the head of the queue has
// waited for a worker (the metric queuectl_queue_wait_seconds). One index
// probe a queue, at any number of jobs.
func (s *Store) DueSince(ctx context.Context) (map[string]time.Time, error) {
	return s.engine.DueSince(ctx, s.Now().UTC())
}

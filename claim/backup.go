package claim

import (
	"context"
	"fmt"
)

// backuper is an engine whose whole database is one file, which it can
// copy consistently while other processes use it (SQLite).
type backuper interface {
	Backup(ctx context.Context, to string) error
}

// Backup writes a consistent copy of the store to the new file to (mode
// 0600, fsync'd), while other processes go on using the store. It refuses
// (ErrConflict) a file that exists, and (ErrInvalid) an engine whose
// database is not a file: PostgreSQL has pg_dump.
func (s *Store) Backup(ctx context.Context, to string) error {
	b, ok := s.engine.(backuper)
	if !ok {
		return fmt.Errorf("%w: %s is not a file to back up", ErrInvalid, s.Path())
	}
	return b.Backup(ctx, to)
}

// Restorer puts the backup file from in place of the database at location,
// and returns where the database it replaced was kept ("" when there was
// none). Once from is found sound, and before anything is replaced, it
// calls ready (when not nil), whose error ends the restore.
type Restorer func(ctx context.Context, location, from string, ready func() error) (kept string, err error)

var restorers = map[string]Restorer{}

// RegisterRestorer makes an engine's Restorer known to Restore.
func RegisterRestorer(name string, r Restorer) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	restorers[name] = r
}

// Restore puts the backup file from in place of the database at location
// (see the engine's Restorer). The caller makes sure no worker uses the
// store, in ready: one that does finds its file replaced and stops. A
// backup that is not sound is refused first, whatever ready would say.
func Restore(ctx context.Context, location, from string, ready func() error) (kept string, err error) {
	name := EngineFor(location)
	enginesMu.Lock()
	r, ok := restorers[name]
	enginesMu.Unlock()
	if !ok {
		return "", fmt.Errorf("%w: the %s engine restores no backup file", ErrInvalid, name)
	}
	return r(ctx, location, from, ready)
}

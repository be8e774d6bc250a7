package claim

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// Store is the queue. It is safe for concurrent use by many goroutines, and
// many processes (on many hosts, with PostgreSQL) may open the same
// database. Its methods make the domain's decisions; its Engine keeps them.
type Store struct {
	engine Engine
	// Now is the clock; tests replace it so that backoff and leases never sleep.
	Now func() time.Time
}

// Open opens the store at location and brings its schema up to date: a
// postgres:// or postgresql:// URL is a PostgreSQL database, anything else
// the path of a SQLite file (created, mode 0600). The engine must be linked
// in (import claim/sqlite, claim/postgres). The caller owns the Store and
// must Close it.
func Open(location string) (*Store, error) { return OpenWith(location, OpenOptions{}) }

// OpenWith is Open with o (a worker's pool size: ForWorker).
func OpenWith(location string, o OpenOptions) (*Store, error) {
	if err := CheckLocation(location); err != nil {
		return nil, err
	}
	open, err := opener(EngineFor(location))
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	e, err := open(ctx, location, o)
	if err != nil {
		return nil, err
	}
	if err := e.Migrate(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return New(e), nil
}

// OpenReadOnly opens the store at location to read it only, as the source
// of a copy: nothing it does changes the database, it never creates one,
// and it refuses a schema older than this binary's (that Open would
// migrate). The caller owns the Store and must Close it.
func OpenReadOnly(location string) (*Store, error) {
	if err := CheckLocation(location); err != nil {
		return nil, err
	}
	open, err := lookup(readers, EngineFor(location))
	if err != nil {
		return nil, err
	}
	e, err := open(context.Background(), location, OpenOptions{})
	if err != nil {
		return nil, err
	}
	return New(e), nil
}

// New returns a Store over an open, migrated engine, which it then owns.
func New(e Engine) *Store {
	return &Store{engine: e, Now: time.Now}
}

// CheckFile returns an ErrReplaced error when the database is no longer the
// one the store opened: a SQLite file deleted or replaced, whose open
// descriptors would take writes where no other process looks. Every write
// checks first; idle long-running callers may check themselves.
func (s *Store) CheckFile() error { return s.engine.Check() }

// Path returns what the store was opened on: the database file's path, or
// the PostgreSQL URL without its password.
func (s *Store) Path() string { return s.engine.Location() }

// Full returns the ErrDiskFull a write to the store meets now, when it is
// a SQLite file whose file system has no space or no inode left (as the
// engine names it, DiskFullAt), and nil otherwise: always for PostgreSQL,
// whose server's disk this host cannot see. It writes nothing: a reader
// learns why the writers of the store wait, without being one of them.
func (s *Store) Full() error {
	path := s.Path()
	if EngineFor(path) != EngineSQLite {
		return nil
	}
	switch dir := filepath.Dir(path); {
	case NoSpace(dir):
		return DiskFullAt(path, false)
	case NoInodes(dir):
		return DiskFullAt(path, true)
	}
	return nil
}

// Names reports whether location, however spelt, names this store
// (SameStore): how a worker knows a client's --db for its own.
func (s *Store) Names(location string) bool { return SameStore(location, s.Path()) }

// Close closes the database.
func (s *Store) Close() error { return s.engine.Close() }

// Changes returns a channel that receives soon after any process commits a
// change to the queue (an enqueue, a finished run, a stop request). Sends
// coalesce: one receive may stand for many changes. The channel is closed
// when ctx ends; the watching goroutine is owned by ctx. Missing a wake-up
// costs latency, never correctness: every waiter also polls.
func (s *Store) Changes(ctx context.Context) (<-chan struct{}, error) {
	return s.engine.Changes(ctx)
}

// wakeUps is an engine whose wake-ups (Changes) come over a connection of
// their own that may be lost: PostgreSQL's LISTEN.
type wakeUps interface {
	WakeUpsLost() (since time.Time, err error)
}

// WakeUpsLost reports why the store's wake-ups are not heard now, and
// since when: the connection that listens for them cannot be made (a
// server at max_connections, a role's CONNECTION LIMIT). Meanwhile every
// waiter polls: jobs start late, none is lost. nil when they are heard,
// and for an engine whose wake-ups cannot be lost (SQLite).
func (s *Store) WakeUpsLost() (since time.Time, err error) {
	if w, ok := s.engine.(wakeUps); ok {
		return w.WakeUpsLost()
	}
	return time.Time{}, nil
}

// NewerSchemaError is the refusal to open a database whose schema is newer
// than this binary's: a newer queuectl migrated it, and this one would not
// know what its writes must keep.
type NewerSchemaError struct {
	Version, Known int
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this queuectl knows (%d): upgrade queuectl", e.Version, e.Known)
}

// Hint says what to run instead.
func (e *NewerSchemaError) Hint() string {
	return "a newer queuectl has migrated this store: run that version (queuectl version says which this is), and install it on every host that uses the store"
}

package claim

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// Copying a store into another (`queuectl db copy`): a home outgrows
// SQLite and moves to PostgreSQL without losing its history. The copy is
// by table and column, not through Job and Run: both engines keep the same
// columns with the same numbers in them (times as Unix nanoseconds), so a
// row copied as it is keeps its id, seq, attempts, run numbering and every
// column a later version adds, on both sides at once.

// CopyTables lists the tables a copy carries, each before the tables that
// refer to it. Left out: workers (processes on the source's host; they
// register again with the store they run on), the counts per queue and
// state (the target counts its copied jobs itself), the ingest keys of
// removed jobs (gone_ingests: a spool file left behind is its host's, and
// a copy is made with the workers stopped) and the schema's own
// bookkeeping.
var CopyTables = []string{"jobs", "runs", "deps", "schedules", "queue_limits", "paused_queues", "config"}

// copyKeys is the primary key of each of CopyTables, the order a copy reads
// its rows in.
var copyKeys = map[string]string{
	"jobs": "seq", "runs": "job_id, attempt", "deps": "job_id, after_id", "schedules": "name",
	"queue_limits": "queue", "paused_queues": "queue", "config": "key",
}

// CopyOrder returns the ORDER BY of a table of CopyTables, the same on
// every engine, and an error for any other name.
func CopyOrder(table string) (string, error) {
	order, ok := copyKeys[table]
	if !ok {
		return "", fmt.Errorf("copy: no table %q", table)
	}
	return order, nil
}

// A Snapshot is one consistent view of a store's tables, valid while the
// Export call that gave it runs.
type Snapshot interface {
	// Table returns table's columns and its rows in primary key order, one
	// in memory at a time. A value is nil, an integer, a bool, a string or
	// a []byte.
	Table(ctx context.Context, table string) (columns []string, rows iter.Seq2[[]any, error], err error)
}

// ImportParams is a copy as the target engine receives it.
type ImportParams struct {
	From   Snapshot
	Tables []string // CopyTables
	// Check is called in the import's transaction, before any row is
	// written, with the rows each of Tables holds in the target and its
	// stored config; it refuses a target that holds data of its own.
	Check func(counts map[string]int64, config map[string]string) error
	// Progress, when set, is called every CopyProgressRows rows of a table
	// and once at its end (done).
	Progress func(table string, rows int64, done bool)
}

// CopyProgressRows is how often an import reports its progress.
const CopyProgressRows = 50_000

// NotEmptyError is the refusal of a copy into a store that holds data
// already: a copy never mixes two histories, nor overwrites one.
type NotEmptyError struct {
	Holds []string // "3 jobs", "1 queue limit", "config max-retries=5"
}

func (e *NotEmptyError) Error() string {
	return "the target is not empty: it holds " + strings.Join(e.Holds, ", ") + "; nothing was copied"
}

// Hint says how to copy all the same.
func (e *NotEmptyError) Hint() string {
	return "copy into a new, empty database (createdb NAME), or a new schema (CREATE SCHEMA NAME, then add &search_path=NAME to the URL)"
}

// OldSchemaError is the refusal of OpenReadOnly to read a database whose
// schema is older than this binary's: Open would migrate it, a read-only
// open must not.
type OldSchemaError struct {
	Location      string
	Version, Want int
}

func (e *OldSchemaError) Error() string {
	return fmt.Sprintf("database %s has schema version %d, older than this queuectl's (%d), and is only read here", e.Location, e.Version, e.Want)
}

// Hint says how to bring it up to date.
func (e *OldSchemaError) Hint() string {
	return "run any command on it once (queuectl status, with the same --home or --db) to bring it up to date, then copy"
}

// tableWords names a table's rows in messages: one, many.
var tableWords = map[string][2]string{
	"jobs": {"job", "jobs"}, "runs": {"run", "runs"}, "deps": {"dependency", "dependencies"},
	"schedules": {"schedule", "schedules"}, "queue_limits": {"queue limit", "queue limits"},
	"paused_queues": {"paused queue", "paused queues"},
}

// CopyTo copies everything s keeps that outlives its workers (CopyTables)
// into dst, in one transaction of dst: all of it or, on any error or a
// cancelled ctx, nothing. s is only read, in one snapshot. dst must hold
// no job, run, schedule, queue setting nor config value other than the
// defaults (NotEmptyError).
//
// Jobs keep their state. One left processing (by a worker that crashed)
// is recovered on dst as a lost run, as it would have been on s; the
// caller makes sure that no worker still runs on s, whose changes after
// the snapshot would not be copied. progress is as ImportParams.Progress.
// It returns the rows copied, per table.
func (s *Store) CopyTo(ctx context.Context, dst *Store, progress func(table string, rows int64, done bool)) (map[string]int64, error) {
	var counts map[string]int64
	err := s.engine.Export(ctx, func(snap Snapshot) error {
		var err error
		counts, err = dst.engine.Import(ctx, ImportParams{
			From: snap, Tables: CopyTables, Progress: progress,
			Check: func(counts map[string]int64, config map[string]string) error {
				return refuseNonEmpty(counts, config)
			},
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("copy %s to %s: %w", s.Path(), dst.Path(), err)
	}
	return counts, nil
}

// refuseNonEmpty returns the NotEmptyError of a target whose tables hold
// rows (counts), or whose config sets a key to anything but its default,
// which a copy would overwrite; nil for an empty one.
func refuseNonEmpty(counts map[string]int64, config map[string]string) error {
	var holds []string
	for _, t := range CopyTables {
		words := tableWords[t]
		switch n := counts[t]; {
		case t == "config", n == 0:
		case n == 1:
			holds = append(holds, "1 "+words[0])
		default:
			holds = append(holds, fmt.Sprintf("%d %s", n, words[1]))
		}
	}
	set, defaults := configOf(config), DefaultConfig()
	var keys []string
	for key, value := range config {
		k, _, err := LookupConfigKey(key)
		if err != nil || k.get(&set) != k.get(&defaults) {
			keys = append(keys, fmt.Sprintf("config %s=%s", key, value))
		}
	}
	slices.Sort(keys)
	if holds = append(holds, keys...); len(holds) == 0 {
		return nil
	}
	return &NotEmptyError{Holds: holds}
}

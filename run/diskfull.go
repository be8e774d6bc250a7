package run

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A full disk, like a store outage (outage.go), is a spell, not a stream
// of errors: the worker says once that the disk is full (where, and what
// waits for room) and once that there is room again. Meanwhile each of its
// loops retries at its own pace, without a line per retry: results wait to
// be recorded, leases to be renewed, jobs to be claimed or to start.

//
// The store's disk and that of logs/ are two spells, even where they are
// one file system: SQLite may still find room in its free pages while a
// log file finds none, and each spell ends when its own writes go through.

// fullness is whether writes of one kind found their disk full, and since
// when; waits is what waits for room.
type fullness struct {
	waits string
	mu    sync.Mutex
	since time.Time // zero: not full
	dir   string    // the directory the first error named
}

// What waits on a full disk, for the store and for logs/.
const (
	storeWaits = "ended runs wait to be recorded, leases to be renewed, and no job is claimed (running jobs go on)"
	logsWaits  = "no job starts (running jobs go on)"
)

// full reports whether err is a full disk (claim.ErrDiskFull, or a run's
// fault as execute words it); the first of a spell is said.
func (f *fullness) full(w *Worker, err error) bool {
	if err == nil || !isDiskFull(err) {
		return false
	}
	f.mu.Lock()
	first := f.since.IsZero()
	if first {
		f.since, f.dir = time.Now(), FullDir(err.Error())
	}
	f.mu.Unlock()
	if first {
		w.emit(Event{Kind: EventDiskFull, Err: err.Error(), Waits: f.waits})
	}
	return true
}

// room notes a write that went through: the end of a spell is said.
func (f *fullness) room(w *Worker) {
	f.mu.Lock()
	since, dir := f.since, f.dir
	f.since, f.dir = time.Time{}, ""
	f.mu.Unlock()
	if !since.IsZero() {
		w.emit(Event{Kind: EventDiskRoom, Err: dir, Duration: time.Since(since)})
	}
}

// diskFull reports whether err, of a write to the store, is a full disk.
func (w *Worker) diskFull(err error) bool { return w.fullStore.full(w, err) }

// diskRoom notes a write to the store that went through.
func (w *Worker) diskRoom() { w.fullStore.room(w) }

// isDiskFull: claim.ErrDiskFull, or a run's fault that says "disk full".
func isDiskFull(err error) bool {
	return errors.Is(err, claim.ErrDiskFull) || strings.HasPrefix(err.Error(), "disk full: ")
}

// FullDir is the directory a disk-full error names ("disk full: DIR (…"),
// or "" when it names none.
func FullDir(msg string) string {
	_, rest, ok := strings.Cut(msg, claim.ErrDiskFull.Error()+": ")
	if !ok {
		return ""
	}
	dir, _, ok := strings.Cut(rest, " (")
	if !ok {
		return ""
	}
	return dir
}

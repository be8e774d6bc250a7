package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/queuectl/queuectl/claim"
)

// DefaultSettle is how long a file that is not yet a complete JSON object,
// and not broken before its end, may stay unchanged before it is rejected
// as truncated. It is long enough
// for cp over a slow disk; writers that need longer should write x.json.tmp
// and rename it.
const DefaultSettle = 5 * time.Second

// Watcher ingests the spool of Dirs into Store. Zero durations take their
// defaults. Any number of Watchers, in any number of processes, may share
// one spool: each file becomes exactly one job.
type Watcher struct {
	Dirs  Dirs
	Store *claim.Store
	// Rescan is how often the spool is listed besides fsnotify events,
	// which are only hints (config spool-rescan; 0: its default).
	Rescan time.Duration
	// Settle is how long a file cut short must stay unchanged before it
	// is rejected (0: DefaultSettle).
	Settle time.Duration
	// Events receives what the watcher does (spool/event.go), diagnostics
	// included as EventWarning; may be nil.
	Events func(Event)
	// Log receives diagnostics when Events is nil, one line per call; nil
	// discards them.
	Log func(format string, args ...any)
	// AwaySaid: another part of the process (a worker) says when the store
	// is unavailable and when it is back; not said here again.
	AwaySaid bool

	onPass func() // for tests: called before each pass of Run

	// ignored holds the names said ignored (EventIgnored): each is said
	// once over every Pass and Run of the Watcher.
	ignoredMu sync.Mutex
	ignored   map[string]bool
}

// Stats counts what one Pass did with the files it found.
type Stats struct {
	Ingested   int // new jobs
	Duplicates int // files whose job was committed before an ingester stopped
	Redriven   int // dead/ files dropped back, whose dead jobs are pending again
	Skipped    int // unique_key skips: a live job with the key exists
	Rejected   int // moved to rejected/
	Waiting    int // not yet complete JSON, left for a later pass
}

// Run ingests the spool until ctx ends, then returns nil. It creates the
// directories, ingests what is there, and passes again on fsnotify events
// for candidate names, every Rescan, after an event queue overflow, and
// when a waiting file may have settled. Without fsnotify (inotify limits
// reached, say) it logs so and relies on the rescans. An unsafe spool
// pauses ingestion: Run says so once (EventUnsafe), takes nothing while it
// lasts, and resumes by itself once the directory is safe again
// (EventSafe); a caller that must refuse an unsafe spool at start checks
// it first (CheckSpool). A bad file never ends Run; a failed pass (the
// database locked too long, say) is logged and its files are tried again
// by the next, unless the database file was deleted or replaced, or is
// corrupt: Run returns that error (claim.Unusable), within
// fileCheckInterval of a replacement even when idle. Run starts no goroutine that outlives it.
func (w *Watcher) Run(ctx context.Context) error {
	var unsafe *UnsafeError
	if err := w.prepare(); err != nil && !errors.As(err, &unsafe) {
		return err
	}
	// Watch before the first listing, so that no file dropped meanwhile
	// waits for the rescan.
	fw, err := w.watch()
	if err != nil {
		w.logf("%v; the spool is only rescanned every %v", err, w.rescan())
	}
	defer func() {
		if fw != nil {
			fw.Close()
		}
	}()
	s, err := w.open()
	if err != nil {
		return err
	}
	defer func() { s.own.close() }()
	w.emit(Event{Kind: EventWatching, Path: w.Dirs.Spool})
	rescan := time.NewTicker(w.rescan())
	defer rescan.Stop()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	full := true
	var paused *UnsafeError // the spool turned unsafe; nothing is taken
	away := false           // the store was unreachable at the last pass: said already
	for {
		err := w.prepare()
		if err == nil {
			s, fw, err = w.follow(s, fw)
		}
		var t tally
		if err == nil {
			if paused != nil {
				w.tell(Event{Kind: EventSafe, Path: w.Dirs.Spool})
				paused, full = nil, true
			}
			if w.onPass != nil {
				w.onPass()
			}
			t, err = s.pass(ctx, full)
		}
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case errors.As(err, &unsafe):
			if paused == nil || paused.Problem != unsafe.Problem {
				w.tell(Event{Kind: EventUnsafe, Path: w.Dirs.Spool, Err: unsafe.Problem + "; fix: " + unsafe.Fix})
			}
			paused = unsafe
		case claim.Unusable(err):
			return err // no pass can succeed: the taken files wait for the next ingester
		case errors.Is(err, claim.ErrUnavailable):
			// Said once: the files wait in the spool until it is back.
			if !away && !w.AwaySaid {
				w.logf("%v; the spool's files wait until the store is back", err)
			}
		case err != nil:
			w.logf("%v", err)
		}
		away = errors.Is(err, claim.ErrUnavailable)
		if !t.wake.IsZero() {
			settle.Reset(time.Until(t.wake) + 10*time.Millisecond)
		}
		if full, err = w.wait(ctx, fw, s.writing, rescan.C, settle.C); err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// fileCheckInterval is how often an idle watcher checks that its database
// file is still the one at the path (SPEC §6: within a second).
const fileCheckInterval = 250 * time.Millisecond

// watch starts fsnotify on the spool directory.
func (w *Watcher) watch() (*fsnotify.Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch spool: %w", err)
	}
	if err := fw.Add(w.Dirs.Spool); err != nil {
		fw.Close()
		return nil, fmt.Errorf("watch spool: %w", err)
	}
	return fw, nil
}

// Pass ingests every complete file in the spool once, and adopts the files
// of ingesters that died; a file still being written is left for later and
// counted in Stats.Waiting. It returns an *UnsafeError for an unsafe spool,
// or the error that stopped the pass (bad files are no errors).
func (w *Watcher) Pass(ctx context.Context) (Stats, error) {
	if err := w.prepare(); err != nil {
		return Stats{}, err
	}
	s, err := w.open()
	if err != nil {
		return Stats{}, err
	}
	defer s.own.close()
	t, err := s.pass(ctx, true)
	return t.Stats, err
}

func (w *Watcher) prepare() error {
	if w.Store == nil {
		return errors.New("spool watcher has no store")
	}
	if err := w.Store.CheckFile(); claim.Unusable(err) {
		return err
	}
	if err := w.Dirs.Make(); err != nil {
		return err
	}
	return CheckSpool(w.Dirs.Spool)
}

func (w *Watcher) open() (*session, error) {
	own, err := openIngestDir(w.Dirs.Spool)
	if err != nil {
		return nil, err
	}
	settle := w.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	spool, err := os.Lstat(w.Dirs.Spool)
	if err != nil {
		own.close()
		return nil, fmt.Errorf("open spool: %w", err)
	}
	return &session{Watcher: w, own: own, spool: spool, uid: os.Getuid(), settle: settle, writing: map[string]bool{}}, nil
}

func (w *Watcher) rescan() time.Duration {
	if w.Rescan > 0 {
		return w.Rescan
	}
	return claim.DefaultConfig().SpoolRescan
}

// wait blocks until a pass is due or ctx ends. full says the pass should
// also adopt the files of dead ingesters: on rescans and after lost events.
// fw may be nil: then only the timers count. writing holds the names a
// writer held open at the last pass, whose writes are no hint.
func (w *Watcher) wait(ctx context.Context, fw *fsnotify.Watcher, writing map[string]bool, rescan, settle <-chan time.Time) (full bool, err error) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if fw != nil {
		events, errs = fw.Events, fw.Errors
	}
	check := time.NewTicker(fileCheckInterval)
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case <-check.C:
			if err := w.Store.CheckFile(); claim.Unusable(err) {
				return false, err
			}
		case <-rescan:
			return true, nil
		case <-settle:
			return false, nil
		case ev, ok := <-events:
			if !ok {
				return false, errors.New("watch spool: fsnotify stopped")
			}
			if w.hint(ev, writing) {
				return drain(fw), nil
			}
		case err, ok := <-errs:
			if !ok {
				return false, errors.New("watch spool: fsnotify stopped")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.logf("spool events overflowed; rescanning")
			} else {
				w.logf("watch spool: %v; rescanning", err)
			}
			return true, nil
		}
	}
}

// hint reports whether ev may mean a file to ingest. Renames and removals
// out of the spool (mostly takes, by this and other ingesters) are not,
// nor are the writes to a file its writer held open at the last pass
// (writing): that pass looks again every writerPoll until it is closed,
// so that a slow copy's thousands of writes do not cost a pass each.
func (w *Watcher) hint(ev fsnotify.Event, writing map[string]bool) bool {
	if ev.Name == w.Dirs.Spool {
		return true // the spool itself changed: the pass re-checks it
	}
	name := filepath.Base(ev.Name)
	switch {
	case !candidate(name):
		return false
	case ev.Has(fsnotify.Create) || ev.Has(fsnotify.Chmod):
		return true
	}
	return ev.Has(fsnotify.Write) && !writing[name]
}

// drain discards the events already queued, so that a burst of drops costs
// one pass, not one per file. full reports an error among them.
func drain(fw *fsnotify.Watcher) (full bool) {
	for {
		select {
		case _, ok := <-fw.Events:
			if !ok {
				return full
			}
		case _, ok := <-fw.Errors:
			if !ok {
				return full
			}
			full = true
		default:
			return full
		}
	}
}

// tell reports e to Events, or as a line to Log.
func (w *Watcher) tell(e Event) {
	switch {
	case w.Events != nil:
		w.emit(e)
	case w.Log != nil:
		w.Log("%s", e.String())
	}
}

// logf reports a diagnostic: an EventWarning, or a line to Log.
func (w *Watcher) logf(format string, args ...any) {
	switch {
	case w.Events != nil:
		w.emit(Event{Kind: EventWarning, Err: fmt.Sprintf(format, args...)})
	case w.Log != nil:
		w.Log(format, args...)
	}
}

package spool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/queuectl/queuectl/claim"
)

// TestScheduleFileSavedByRenameKeepsItsPause: an editor that saves by
// renaming the old file away and writing a new one (vim does) leaves
// schedules/NAME.json missing for a moment. A pass that sees that moment
// keeps the schedule, paused as it was, and takes the new file as an edit;
// a file that stays away removes its schedule once the grace is over.
func TestScheduleFileSavedByRenameKeepsItsPause(t *testing.T) {
	s, now, dirs, file, write := nightlyRig(t)
	d := &ScheduleDir{Dirs: dirs, Store: s, Grace: 5 * time.Second}
	ctx := t.Context()
	pass := func() []claim.Schedule { return passList(t, d) }
	write("make backup")
	if list := pass(); len(list) != 1 {
		t.Fatalf("schedules = %+v, want nightly", list)
	}
	if _, _, err := s.PauseSchedule(ctx, "nightly", true); err != nil {
		t.Fatal(err)
	}

	// The save: the old file renamed away, a pass, the new file written.
	if err := os.Rename(file, file+"~"); err != nil {
		t.Fatal(err)
	}
	if list := pass(); len(list) != 1 || !list[0].Paused {
		t.Fatalf("while the file was renamed away, schedules = %+v, want nightly still paused", list)
	}
	write("make backup --full")
	os.Remove(file + "~")
	list := pass()
	if len(list) != 1 || !list[0].Paused || !strings.Contains(list[0].Spec, "--full") {
		t.Fatalf("after the save, schedules = %+v, want nightly paused with the new command", list)
	}

	// Removed for good: kept through the grace, gone after it.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if list := pass(); len(list) != 1 {
		t.Fatalf("just after rm, schedules = %+v, want nightly kept for the grace", list)
	}
	*now = now.Add(5 * time.Second)
	if list := pass(); len(list) != 0 {
		t.Errorf("once the file was gone for the grace, schedules = %+v, want none", list)
	}
}

// TestFileScheduleOfAnotherHome: two homes (two hosts of a fleet) share one
// store, and only home A has schedules/nightly.json. Home B's passes leave
// A's schedule alone, paused as A's user left it, however long B has no
// such file; A's own file, removed, still removes it.
func TestFileScheduleOfAnotherHome(t *testing.T) {
	s := mustOpenStore(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	ctx := t.Context()
	a := &ScheduleDir{Dirs: DirsOf(t.TempDir()), Store: s, Grace: 5 * time.Second}
	b := &ScheduleDir{Dirs: DirsOf(t.TempDir()), Store: s, Grace: 5 * time.Second}
	pass := func(d *ScheduleDir) []claim.Schedule { return passList(t, d) }
	for _, d := range []*ScheduleDir{a, b} {
		if err := d.Dirs.Make(); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(a.Dirs.Schedules, "nightly.json")
	if err := os.WriteFile(file, []byte(`{"cron": "0 3 * * *", "tz": "UTC", "command": "x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	pass(a)
	if _, _, err := s.PauseSchedule(ctx, "nightly", true); err != nil {
		t.Fatal(err)
	}
	pass(b)
	now = now.Add(time.Minute) // long past the grace
	if list := pass(b); len(list) != 1 || !list[0].Paused {
		t.Fatalf("after home B's passes, schedules = %+v, want A's nightly, paused", list)
	}
	if list := pass(a); len(list) != 1 || !list[0].Paused {
		t.Fatalf("after home A's pass, schedules = %+v, want nightly, paused", list)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	pass(a)
	now = now.Add(5 * time.Second)
	if list := pass(a); len(list) != 0 {
		t.Errorf("once A's file was gone for the grace, schedules = %+v, want none", list)
	}
}

// TestOneShotPassesCountTheGrace: `schedule list` reads schedules/ with a
// pass of its own each time. One that comes while an editor saves by
// rename removed the schedule, which came back unpaused with the new
// file. Such passes count the grace from when the first of them missed
// the file (kept in schedules/.missing), as a worker's passes do, and tell
// which schedules they kept only for it.
func TestOneShotPassesCountTheGrace(t *testing.T) {
	s, now, dirs, file, write := nightlyRig(t)
	// each pass by a command of its own, as `schedule list` makes it
	pass := func() ([]claim.Schedule, []string) {
		d := &ScheduleDir{Dirs: dirs, Store: s}
		return passList(t, d), d.Missing()
	}
	write("make backup")
	pass()
	if _, _, err := s.PauseSchedule(t.Context(), "nightly", true); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file, file+"~"); err != nil {
		t.Fatal(err)
	}
	if list, missing := pass(); len(list) != 1 || !list[0].Paused || !slices.Equal(missing, []string{"nightly"}) {
		t.Fatalf("while the file was renamed away, schedules = %+v, missing %q; want nightly kept, paused, and missing", list, missing)
	}
	write("make backup --full")
	os.Remove(file + "~")
	if list, missing := pass(); len(list) != 1 || !list[0].Paused || !strings.Contains(list[0].Spec, "--full") || len(missing) != 0 {
		t.Fatalf("after the save, schedules = %+v, missing %q; want nightly paused with the new command", list, missing)
	}

	// Two saves an hour apart, each seen by a pass while its file was
	// away, and none between them: the second save's grace counts from
	// its own pass, not from the first's.
	if err := os.Rename(file, file+"~"); err != nil {
		t.Fatal(err)
	}
	pass()
	write("make backup --full")
	os.Remove(file + "~")
	*now = now.Add(time.Hour)
	if err := os.Rename(file, file+"~"); err != nil {
		t.Fatal(err)
	}
	if list, _ := pass(); len(list) != 1 || !list[0].Paused {
		t.Fatalf("during a second save an hour after the first, schedules = %+v, want nightly kept, paused", list)
	}
	if err := os.Rename(file+"~", file); err != nil {
		t.Fatal(err)
	}
	if list, missing := pass(); len(list) != 1 || !list[0].Paused || len(missing) != 0 {
		t.Fatalf("after the second save, schedules = %+v, missing %q; want nightly paused", list, missing)
	}

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	pass()
	*now = now.Add(4 * time.Second)
	if list, missing := pass(); len(list) != 1 || len(missing) != 1 {
		t.Fatalf("4 s after rm, schedules = %+v, missing %q; want nightly kept for the grace", list, missing)
	}
	*now = now.Add(time.Second)
	if list, missing := pass(); len(list) != 0 || len(missing) != 0 {
		t.Fatalf("once the file was gone for the grace, schedules = %+v, missing %q; want none", list, missing)
	}
	if data, err := os.ReadFile(filepath.Join(dirs.Schedules, ownedFile)); err != nil || strings.Contains(string(data), "nightly") {
		t.Errorf(".owned = %q, %v; want nightly no longer in it", data, err)
	}
	if _, err := os.Stat(filepath.Join(dirs.Schedules, missingFile)); err == nil {
		t.Errorf("%s is left with no schedule file missing", missingFile)
	}
}

// TestMissingRecordWrittenOnlyWhenItChanges: every write of
// schedules/.missing is an fsnotify event for the workers' watchers, and a
// worker's pass that wrote it on every pass woke itself again at once, for
// the whole grace. A pass that finds the record as it would write it
// writes nothing; a worker's wait takes no event of the passes' records.
func TestMissingRecordWrittenOnlyWhenItChanges(t *testing.T) {
	s := mustOpenStore(t)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	d := &ScheduleDir{Dirs: DirsOf(t.TempDir()), Store: s}
	if err := d.Dirs.Make(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(d.Dirs.Schedules, "nightly.json")
	if err := os.WriteFile(file, []byte(`{"cron": "0 3 * * *", "command": "x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	passList(t, d)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	passList(t, d)
	passList(t, d) // the record as the first wrote it, with a trusted header now
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Close()
	if err := fw.Add(d.Dirs.Schedules); err != nil {
		t.Fatal(err)
	}
	passList(t, d)
	// A file written after the pass: its event comes after any the pass made.
	marker := filepath.Join(d.Dirs.Schedules, "marker")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var seen []fsnotify.Event
	for e := range fw.Events {
		if e.Name == marker {
			break
		}
		seen = append(seen, e)
	}
	if len(seen) > 0 {
		t.Errorf("a pass that changed nothing made events %v", seen)
	}

	// What a worker's wait makes of an event of a record: nothing.
	events := make(chan fsnotify.Event, 2)
	events <- fsnotify.Event{Name: filepath.Join(d.Dirs.Schedules, missingFile), Op: fsnotify.Write}
	events <- fsnotify.Event{Name: file, Op: fsnotify.Create}
	ro := (<-chan fsnotify.Event)(events)
	if !d.wait(t.Context(), nil, nil, &ro) || len(events) != 0 {
		t.Errorf("wait returned with %d events left, want it to pass over the record's and return on the file's", len(events))
	}
}

// nightlyRig is a store whose clock the test moves (*now), a home's
// made directories, and write, which writes schedules/nightly.json (file)
// with the given command.
func nightlyRig(t *testing.T) (s *claim.Store, now *time.Time, dirs Dirs, file string, write func(command string)) {
	t.Helper()
	s = mustOpenStore(t)
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return clock }
	dirs = DirsOf(t.TempDir())
	if err := dirs.Make(); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dirs.Schedules, "nightly.json")
	write = func(command string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(`{"cron": "0 3 * * *", "tz": "UTC", "command": "`+command+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return s, &clock, dirs, file, write
}

// passList runs one pass of d and returns the store's schedules after it.
func passList(t *testing.T, d *ScheduleDir) []claim.Schedule {
	t.Helper()
	if err := d.Pass(t.Context()); err != nil {
		t.Fatalf("Pass = %v", err)
	}
	list, err := d.Store.Schedules(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestSchedulesCutShortSayNothing: a pass that the end of Run's context
// cut short is no trouble to report. A worker whose start failed (a store
// that takes no writes) said "schedules: list schedules: … context
// canceled" above its error.
func TestSchedulesCutShortSayNothing(t *testing.T) {
	s := mustOpenStore(t)
	var said []string
	d := &ScheduleDir{Dirs: DirsOf(t.TempDir()), Store: s,
		Log: func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := d.Run(ctx); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	if len(said) > 0 {
		t.Errorf("Run with its context ended said %q, want nothing", said)
	}
}

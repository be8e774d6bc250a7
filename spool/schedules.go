package spool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/queuectl/queuectl/claim"
)

// ScheduleDir keeps the store's file schedules equal to the files in a
// home's schedules/ directory: schedules/NAME.json (a job spec plus "cron"
// and "tz") defines schedule NAME; editing the file changes it, removing
// the file removes it. Unlike spool/, the files stay where they are. The
// directory's safety rules are the spool's (CheckSpool), and a file that
// cannot be a schedule — bad JSON or fields, over 1 MiB, not a regular file,
// owned by another user, a name `schedule add` holds — moves to rejected/
// beside a reason, as a spool file would.
type ScheduleDir struct {
	Dirs  Dirs
	Store *claim.Store
	// Rescan is how often the directory is read besides fsnotify events
	// (0: config spool-rescan's default).
	Rescan time.Duration
	// Log receives diagnostics, one line per call; nil discards them.
	Log func(format string, args ...any)
	// AwaySaid: another part of the process (a worker) says when the store
	// is unavailable and when it is back; not said here again.
	AwaySaid bool
	// Grace is how long a file schedule's file may be missing before the
	// schedule is removed (0: DefaultSettle). An editor that saves by
	// renaming the old file away and writing a new one leaves the name
	// empty for a moment: removed then and added again, the schedule would
	// lose its pause. When a file was first missed is kept in
	// schedules/.missing, so that passes of one-shot commands (`schedule
	// list`) count the grace as a worker's do.
	Grace time.Duration

	missing map[string]time.Time // the last pass's file schedules kept for their grace: missed since when (store clock)
}

// Missing names the file schedules whose file the last pass found removed
// and kept for the grace: gone, as far as a list of schedules should tell.
func (d *ScheduleDir) Missing() []string { return slices.Sorted(maps.Keys(d.missing)) }

// grace is Grace, or its default.
func (d *ScheduleDir) grace() time.Duration {
	if d.Grace > 0 {
		return d.Grace
	}
	return scheduleSettle
}

// Pass reads schedules/ once and brings the store in line with it. It
// returns an *UnsafeError for an unsafe directory (and then changes
// nothing), or the store's error; bad files are no errors.
func (d *ScheduleDir) Pass(ctx context.Context) error {
	if err := d.Dirs.Make(); err != nil {
		return err
	}
	if err := CheckSpool(d.Dirs.Schedules); err != nil {
		return err
	}
	// The directory as this pass reads it: a record of missing files
	// holds it (keepMissing) only if the pass ends with it unchanged.
	var read time.Time
	if fi, err := os.Stat(d.Dirs.Schedules); err == nil {
		read = fi.ModTime()
	}
	entries, err := os.ReadDir(d.Dirs.Schedules)
	if err != nil {
		return fmt.Errorf("read schedules: %w", err)
	}
	// Rejections go through a spool session whose "spool" is schedules/,
	// so that a reason's fix moves the file back here.
	rej := &session{Watcher: &Watcher{Dirs: Dirs{Spool: d.Dirs.Schedules, Rejected: d.Dirs.Rejected}, Log: d.Log}, from: d.Dirs.Schedules}
	var defs []claim.NewSchedule
	var waiting []string
	files := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if !candidate(name) {
			continue
		}
		path := filepath.Join(d.Dirs.Schedules, name)
		ns, wait, p := d.read(path, name, e)
		switch {
		case wait:
			waiting = append(waiting, ns.Name)
		case p.what != "":
			if _, err := rej.reject(path, name, p); err != nil {
				d.logf("%v", err)
			}
		default:
			defs = append(defs, ns)
			files[ns.Name] = path
		}
	}
	have, err := d.Store.Schedules(ctx)
	if err != nil {
		return err
	}
	owned, listed := d.owned(files)
	gone := d.graceful(have, owned, files, waiting, d.readMissing())
	keep := slices.Concat(waiting, gone, notOwned(have, owned, files))
	refused, err := d.Store.SyncFileSchedules(ctx, defs, keep)
	for sched, why := range refused {
		if _, err := rej.reject(files[sched], filepath.Base(files[sched]), invalidProblem(filepath.Base(files[sched]), why)); err != nil {
			d.logf("%v", err)
		}
	}
	if err == nil {
		// What this home defines now: its files, and those it waits for.
		mine := slices.Concat(waiting, gone)
		for name := range files {
			if refused[name] == nil {
				mine = append(mine, name)
			}
		}
		if !listed || !sameNames(mine, owned) {
			d.ownChange(&read, func() { d.own(mine) })
		}
		d.keepMissing(read)
	}
	return err
}

// ownedFile, in schedules/, names the file schedules this home's files
// defined, a name a line. A store that several homes share (hosts of a
// fleet, each with its own schedules/) holds the file schedules of all of
// them: a home removes only those it defined and no longer has a file
// for, never another's, which would come back at its owner's next pass
// unpaused and due from now. Hidden, so that no pass reads it as a
// schedule.
const ownedFile = ".owned"

// owned returns the names this home's files defined as of its last pass,
// and whether the list was there. A home without the list yet (made by an
// older queuectl, or never synced) owns what its files define now.
func (d *ScheduleDir) owned(files map[string]string) (map[string]bool, bool) {
	out := map[string]bool{}
	data, err := os.ReadFile(filepath.Join(d.Dirs.Schedules, ownedFile))
	if err != nil {
		for name := range files {
			out[name] = true
		}
		return out, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		// a tab and more after a name: a development build's times
		if name, _, _ := strings.Cut(line, "\t"); name != "" {
			out[name] = true
		}
	}
	return out, true
}

// sameNames reports whether names (repeats allowed) are exactly set.
func sameNames(names []string, set map[string]bool) bool {
	now := map[string]bool{}
	for _, name := range names {
		now[name] = true
	}
	return maps.Equal(now, set)
}

// own records names as what this home's files define, written whole or
// not at all (a new file renamed over).
func (d *ScheduleDir) own(names []string) {
	sorted := slices.Compact(slices.Sorted(slices.Values(names)))
	path := filepath.Join(d.Dirs.Schedules, ownedFile)
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, []byte(strings.Join(sorted, "\n")+"\n"), 0o600); err != nil {
		d.logf("schedules/: record the schedules this home defines: %v", err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		d.logf("schedules/: record the schedules this home defines: %v", err)
	}
}

// notOwned names the file schedules of have that this home has no file
// for and never defined: another home's, left as they are.
func notOwned(have []claim.Schedule, owned map[string]bool, present map[string]string) []string {
	var out []string
	for _, sc := range have {
		if _, ok := present[sc.Name]; sc.File && !ok && !owned[sc.Name] {
			out = append(out, sc.Name)
		}
	}
	return out
}

// graceful returns the file schedules this home defined (owned) whose
// file has been missing for less than the grace: they stay as they are
// for now. present names the schedules with a file this pass read,
// waiting those whose file is being written; kept is when earlier passes,
// of other processes too, first missed a file (readMissing).
func (d *ScheduleDir) graceful(have []claim.Schedule, owned map[string]bool, present map[string]string, waiting []string, kept map[string]time.Time) []string {
	now := d.Store.Now()
	seen := map[string]bool{}
	for _, name := range waiting {
		seen[name] = true
	}
	var keep []string
	missing := map[string]time.Time{}
	for _, sc := range have {
		if _, ok := present[sc.Name]; !sc.File || ok || seen[sc.Name] || !owned[sc.Name] {
			continue
		}
		since, ok := d.missing[sc.Name]
		if !ok {
			since, ok = kept[sc.Name]
		}
		if !ok || since.After(now) { // a clock set back counts from now
			since = now
		}
		if now.Sub(since) < d.grace() {
			keep = append(keep, sc.Name)
			missing[sc.Name] = since
		}
	}
	d.missing = missing
	return keep
}

// missingFile, in schedules/, keeps when the files of the schedules kept for
// their grace were first missed, for the passes of other processes
// (`schedule list`): a first line with the directory's modification time as
// the pass that wrote it read the directory and left it (0: others changed
// it during that pass), then a name, a tab and a time (Unix nanoseconds) a
// line. Hidden, so that no pass reads it as a schedule; apart from .owned,
// whose format older releases read. Locked (flock) while it is read or
// written.
const missingFile = ".missing"

// openMissing opens the record of missing files, locked (how: LOCK_SH or
// LOCK_EX), refusing anything but a regular file of its own (a link, a
// FIFO, a file with other names).
func (d *ScheduleDir) openMissing(flag, how int) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(d.Dirs.Schedules, missingFile), flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1 || st.Size > MaxSize {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file of its own", missingFile)
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readMissing returns when the files of the schedules kept for their
// grace were first missed, as an earlier pass wrote it (keepMissing); none
// when the directory changed since: a file may have come back and gone
// again meanwhile, and its grace starts again.
func (d *ScheduleDir) readMissing() map[string]time.Time {
	out := map[string]time.Time{}
	f, err := d.openMissing(os.O_RDONLY, syscall.LOCK_SH)
	if err != nil {
		return out
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize))
	fi, statErr := os.Stat(d.Dirs.Schedules)
	first, rest, _ := strings.Cut(string(data), "\n")
	if err != nil || statErr != nil || first != strconv.FormatInt(fi.ModTime().UnixNano(), 10) {
		return out
	}
	for _, line := range strings.Split(rest, "\n") {
		name, since, _ := strings.Cut(line, "\t")
		if ns, err := strconv.ParseInt(since, 10, 64); err == nil && name != "" {
			out[name] = time.Unix(0, ns)
		}
	}
	return out
}

// ownChange makes change, a change of the pass's own to the directory,
// and moves read (the directory's modification time as the pass read it)
// past it: unless the directory had changed before it (then read is zero,
// and the record the pass writes is trusted by no one).
func (d *ScheduleDir) ownChange(read *time.Time, change func()) {
	before, err := os.Stat(d.Dirs.Schedules)
	change()
	after, err2 := os.Stat(d.Dirs.Schedules)
	if err != nil || err2 != nil || !before.ModTime().Equal(*read) {
		*read = time.Time{}
		return
	}
	*read = after.ModTime()
}

// keepMissing writes when the files of the schedules kept for their grace
// were first missed (readMissing), with read, the directory's modification
// time as the pass read it, or removes the record when none is. It writes
// the file in place, which leaves that time alone, and only what changed:
// each write is an event for the workers' watchers.
func (d *ScheduleDir) keepMissing(read time.Time) {
	if len(d.missing) == 0 {
		if err := os.Remove(filepath.Join(d.Dirs.Schedules, missingFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.logf("schedules/: %v", err)
		}
		return
	}
	var f *os.File
	var err error
	d.ownChange(&read, func() { f, err = d.openMissing(os.O_RDWR|os.O_CREATE, syscall.LOCK_EX) })
	if err != nil {
		d.logf("schedules/: record which schedule files are missing: %v", err)
		return
	}
	defer f.Close()
	header := int64(0) // the directory changed during the pass, by others: trusted by no one
	if fi, err := os.Stat(d.Dirs.Schedules); err == nil && !read.IsZero() && fi.ModTime().Equal(read) {
		header = read.UnixNano()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", header)
	for _, name := range slices.Sorted(maps.Keys(d.missing)) {
		fmt.Fprintf(&b, "%s\t%d\n", name, d.missing[name].UnixNano())
	}
	if was, err := io.ReadAll(io.LimitReader(f, MaxSize)); err == nil && string(was) == b.String() {
		return
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(b.String()), 0)
	}
	if err != nil {
		d.logf("schedules/: record which schedule files are missing: %v", err)
	}
}

// scheduleSettle is how long an incomplete schedule file is waited for.
const scheduleSettle = DefaultSettle

// read parses one schedule file. wait: it is still being written. A
// problem with a non-empty what: reject it.
func (d *ScheduleDir) read(path, name string, e fs.DirEntry) (ns claim.NewSchedule, wait bool, p problem) {
	ns.Name = strings.TrimSuffix(name, ".json")
	if !e.Type().IsRegular() {
		return ns, false, irregularProblem(name, e.Type(), path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrPermission) {
		return ns, false, unreadableProblem(name, err)
	}
	if err != nil {
		return ns, true, problem{} // gone or replaced since listed: the next pass decides
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ns, true, problem{}
	}
	if uid := owner(fi); uid != os.Getuid() {
		return ns, false, foreignProblem(name, uid)
	}
	if fi.Size() > MaxSize {
		return ns, false, tooBigProblem(name, fi.Size())
	}
	data, err := readSpec(f, fi.Size())
	if err != nil {
		return ns, true, problem{}
	}
	if !complete(data) && time.Since(changed(fi)) < scheduleSettle {
		return ns, true, problem{}
	}
	parsed, err := claim.ParseScheduleFile(ns.Name, trimBOM(data))
	if err != nil {
		return ns, false, invalidProblem(name, err)
	}
	return parsed, false, problem{}
}

func trimBOM(data []byte) []byte {
	if len(data) >= len(bom) && string(data[:len(bom)]) == string(bom) {
		return data[len(bom):]
	}
	return data
}

// Run keeps the store in line with schedules/ until ctx ends, then returns
// nil: a pass at start, on fsnotify events, and every Rescan. An unsafe
// directory is logged (its schedules stay as they were) until it is safe
// again; the store's errors are logged and retried, except those of a
// store that cannot be used on (claim.Unusable), which Run returns.
func (d *ScheduleDir) Run(ctx context.Context) error {
	rescan := d.Rescan
	if rescan <= 0 {
		rescan = claim.DefaultConfig().SpoolRescan
	}
	var events <-chan fsnotify.Event
	if err := d.Dirs.Make(); err == nil {
		if fw, err := fsnotify.NewWatcher(); err == nil {
			defer fw.Close()
			if fw.Add(d.Dirs.Schedules) == nil {
				events = fw.Events
			}
		}
	}
	t := time.NewTicker(rescan)
	defer t.Stop()
	var said string
	for {
		err := d.Pass(ctx)
		if claim.Unusable(err) {
			return err
		}
		// The same trouble is said once, however its words vary: a store
		// that is away fails in several ways until it is back.
		msg := fmt.Sprint(err)
		if errors.Is(err, claim.ErrUnavailable) {
			msg = claim.ErrUnavailable.Error()
		}
		// A pass that ctx's end cut short (the worker's stop, or a start
		// that failed) has nothing to say.
		if err != nil && ctx.Err() == nil && msg != said && !(d.AwaySaid && errors.Is(err, claim.ErrUnavailable)) {
			var unsafe *UnsafeError
			if errors.As(err, &unsafe) {
				d.logf("schedules: %v; fix: %s", err, unsafe.Fix)
			} else {
				d.logf("schedules: %v", err)
			}
			said = msg
		} else if err == nil {
			said = ""
		}
		// A file that went missing is looked for again once its grace is
		// over, whatever the rescan interval.
		var graceOver <-chan time.Time
		if len(d.missing) > 0 {
			graceOver = time.After(d.grace())
		}
		if !d.wait(ctx, t.C, graceOver, &events) {
			return nil
		}
	}
}

// wait waits for the next pass's cause: the rescan tick, the end of a
// grace, or an event of a file a pass reads (not the passes' own records,
// nor an editor's temporary file). It returns false when ctx ends first.
func (d *ScheduleDir) wait(ctx context.Context, tick, graceOver <-chan time.Time, events *<-chan fsnotify.Event) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case <-graceOver:
			return true
		case e, ok := <-*events:
			if !ok {
				*events = nil
				return true
			}
			if !ignored(filepath.Base(e.Name)) {
				return true
			}
		}
	}
}

func (d *ScheduleDir) logf(format string, args ...any) {
	if d.Log != nil {
		d.Log(format, args...)
	}
}

package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Tail follows one job from outside the worker, for `queuectl run`: it
// streams each run's stdout and stderr, attempt after attempt, as the
// worker writes them to the run's log files, and reports each run's start
// and end. A run of another host, whose files are there, is written when
// it ends, from the last 64 KiB of each stream kept with it.
type Tail struct {
	Store  *claim.Store
	Stdout io.Writer // every run's stdout, in order
	Stderr io.Writer // every run's stderr, in order
	// Every is how often the open run's log files are read for new output.
	Every time.Duration
	// Poll is how often the store is read for a run that started: a claim
	// wakes nobody, while the end of a run does (claim.Store.Changes).
	Poll time.Duration
	// Event is called when a run starts and when it ends; may be nil.
	Event func(TailEvent)
	// Look, when set, is called with the job after each read of it that
	// did not find it finished, in Follow's goroutine: what may be said
	// of a job that waits, from what was read anyway.
	Look func(claim.Job)
	// Watch, when set, says that the job changed: it is read at once,
	// without waiting for Every or Poll (Nudges, in the worker's process),
	// but for a start the worker's slot told with the job and run it
	// claimed (Watch.Started), which stand for that read. Then the store's
	// Changes are not watched: in a busy worker every commit fires them,
	// while the job's own start and end nudge; a run of another worker
	// process is seen within Poll.
	Watch *Watch
	// From, when set, is the job as it was just enqueued: the first look
	// takes it for the job, and reads only why it may wait (the queues'
	// pauses and limits), when it never ran. For a Watch that began before
	// the job could start, or saw its start (Nudges keeps the recent ones).
	// A job From says may run now (due, waiting for no job) is not looked
	// at before a nudge or Poll: a slot most often claims it at once, and
	// its start comes with the Watch; why it waits (a paused or full
	// queue) is worth a read only once it has waited.
	From *claim.Job
	// Reach rides out a store that cannot be reached: the job goes on
	// meanwhile, so Follow tries again (and streams its output here) until
	// the store answers. Nil: a Reach that says nothing.
	Reach *Reach
	// Unrecorded is called when the job's run ended but its end waits to
	// be recorded (a full disk), once a run: with a Watch, when the worker
	// tells; without one, when Follow sees it in the store and on this
	// host (endWaits; u.Run then has no exit code, error or tails). Follow
	// goes on until the end is recorded. It is called after what the
	// run's log files hold is written; lost is how much of the run's
	// output they could not keep and that the tails the worker holds do
	// not have: once Unrecorded returns, Follow writes what of the tails
	// was not written (without a Watch: once the end is recorded, after
	// Lost); lost bytes come before them. May be nil.
	Unrecorded func(u Unrecorded, lost int64)
	// Lost, without a Watch, is called once the end of a run Unrecorded
	// told of is recorded, when lost bytes of its output lie between what
	// its files held and the end the store kept with the run, which Follow
	// then writes. May be nil.
	Lost func(lost int64)

	parts []Part  // output of a run not open yet (writeParts)
	wait  endWait // what was seen of the open run's end waiting (endWaits)
}

// TailEvent is a run that started (Ended false) or ended, with its job as
// it was just after. (A worker's own events are Event, run/event.go.)
type TailEvent struct {
	Job   claim.Job
	Run   claim.Run
	Ended bool
}

// finished reports whether a job has reached a state it leaves only when
// someone acts (dlq retry, restart): what Follow waits for.
func finished(s claim.State) bool { return s.Finished() }

// Follow streams job id's runs until the job is finished and every run's
// output is written out, and returns the job. It returns ctx's error when
// ctx ends first, claim.ErrNotFound when the job is gone, and the first
// write or read error, but for the store's being unreachable, which it
// rides out (Reach).
func (t *Tail) Follow(ctx context.Context, id string) (claim.Job, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var changes, nudge <-chan struct{}
	if t.Watch != nil {
		nudge = t.Watch.C
	} else {
		var err error
		if changes, err = t.Store.Changes(ctx); err != nil {
			return claim.Job{}, err
		}
	}
	reach := t.Reach
	if reach == nil {
		reach = &Reach{}
	}
	var output <-chan struct{}
	if t.Watch != nil {
		output = t.Watch.Out
	}
	tick := time.NewTicker(t.Every)
	defer tick.Stop()
	var logs runLogs
	defer logs.close()
	done := 0 // runs streamed to their end
	look, looked := true, time.Time{}
	if f := t.From; f != nil && t.Watch != nil && f.State == claim.Pending && f.Runs == 0 && f.Waiting == 0 &&
		!f.RunAfter.After(time.Now()) {
		t.From, look, looked = nil, false, time.Now()
	}
	for {
		if err := t.copy(&logs); err != nil {
			return claim.Job{}, err
		}
		if u, ok := t.Watch.unrecordedRun(); ok {
			if err := t.unrecorded(&logs, u); err != nil {
				return claim.Job{}, err
			}
		}
		if (look || time.Since(looked) >= t.Poll) && reach.Due() {
			looked = time.Now()
			j, again, err := t.look(ctx, id, &logs, &done, reach)
			switch {
			case ctx.Err() == nil && reach.Unreachable(err):
				look = true // once the store answers
			case err != nil:
				return claim.Job{}, err
			case finished(j.State):
				return j, nil
			default:
				look = again
				if t.Look != nil {
					t.Look(j)
				}
				// Parts of the run this look opened, taken before it was.
				if err := t.writeParts(&logs); err != nil {
					return claim.Job{}, err
				}
			}
		}
		select {
		case <-ctx.Done():
			return claim.Job{}, ctx.Err()
		case <-nudge:
			look = true
			continue
		case <-output:
			continue
		case <-changes:
			look = true // read on the next tick: a busy store changes often
		case <-tick.C:
		}
	}
}

// look reads the job and its runs, and writes out the runs after the
// first *done that ended: their last output, and their ends. A run that
// started is opened in logs, its start told. again: the job was read
// before its current run ended; read both again for the job's state. An
// error leaves *done and logs where the next look goes on from. The end
// of an outage is told to reach before the news it brought.
func (t *Tail) look(ctx context.Context, id string, logs *runLogs, done *int, reach *Reach) (j claim.Job, again bool, err error) {
	j, runs, err := t.read(ctx, id, *done)
	if err != nil {
		return claim.Job{}, false, err
	}
	reach.Answered()
	for ; *done < len(runs); *done++ {
		r := runs[*done]
		if logs.run == nil {
			logs.open(r)
			if !r.NeverRan() { // its end says it did not start
				t.event(TailEvent{Job: j, Run: r})
			}
		}
		if r.EndedAt.IsZero() && !finished(j.State) {
			if u, ok := t.endWaits(j, r); ok {
				if err := t.unrecorded(logs, u); err != nil {
					return claim.Job{}, false, err
				}
			}
			break
		}
		if j.State == claim.Processing && j.Runs == r.Attempt {
			return j, true, nil
		}
		if err := t.writeParts(logs); err != nil { // those that came last, in their order
			return claim.Job{}, false, err
		}
		if err := logs.copy(t.Stdout, t.Stderr); err != nil {
			return claim.Job{}, false, err
		}
		if err := t.kept(ctx, r, logs); err != nil {
			return claim.Job{}, false, err
		}
		logs.close()
		t.event(TailEvent{Job: j, Run: r, Ended: true})
	}
	return j, false, nil
}

// read returns the job and its runs, the job read first: a job that is
// finished then has every run ended. Of the runs, those after the first
// done are filled in: where the job comes from the Watch's start or From,
// the earlier ones are zero.
func (t *Tail) read(ctx context.Context, id string, done int) (claim.Job, []claim.Run, error) {
	if from := t.From; from != nil {
		t.From = nil
		if from.State == claim.Pending && from.Runs == 0 && done == 0 {
			js, err := t.Store.WithReasons(ctx, []claim.Job{*from})
			if err != nil {
				return claim.Job{}, nil, err
			}
			return js[0], nil, nil
		}
	}
	if t.Watch != nil {
		if s, ok := t.Watch.Started(); ok && s.Job.ID == id && s.Run.Attempt == done+1 && s.Job.Runs == s.Run.Attempt {
			runs := make([]claim.Run, done+1)
			runs[done] = s.Run
			return s.Job, runs, nil
		}
	}
	j, err := t.Store.Get(ctx, id)
	if err != nil {
		return claim.Job{}, nil, err
	}
	runs, err := t.Store.Runs(ctx, id)
	return j, runs, err
}

// kept writes what the store kept of ended run r, when it ran on another
// host: its files cannot be read here. Of a run of this host whose end
// waited for room, told without its worker's tails (endWaits), it writes
// what comes after its files, which the full disk cut, saying first how
// much is missing (Lost).
func (t *Tail) kept(ctx context.Context, r claim.Run, logs *runLogs) error {
	own := r.Host == HostID()
	if own && (!logs.written || r.Tails == nil || r.Tails.Stdout.Size <= logs.pos[0] && r.Tails.Stderr.Size <= logs.pos[1]) {
		return nil
	}
	runs, err := t.Store.RunsWithTails(ctx, r.JobID)
	if err != nil {
		return err
	}
	for _, got := range runs {
		if got.Attempt == r.Attempt && got.Tails != nil && own {
			lost, rest := logs.after(*got.Tails)
			if lost > 0 && t.Lost != nil {
				t.Lost(lost)
			}
			return t.writeRest(logs, rest)
		}
		if got.Attempt == r.Attempt && got.Tails != nil {
			if _, err := t.Stdout.Write(got.Tails.Stdout.Data); err != nil {
				return err
			}
			_, err := t.Stderr.Write(got.Tails.Stderr.Data)
			return err
		}
	}
	return nil
}

func (t *Tail) event(e TailEvent) {
	if t.Event != nil {
		t.Event(e)
	}
}

// copy writes the open run's new output: the parts the Watch has, in the
// order they came, or, until one came, what was added to its files.
func (t *Tail) copy(logs *runLogs) error {
	if err := t.writeParts(logs); err != nil {
		return err
	}
	if logs.live {
		return nil
	}
	return logs.copy(t.Stdout, t.Stderr)
}

// unrecorded writes out a run that ended but is not recorded yet (Tail.
// Unrecorded): what its files hold, then what of the tails its worker
// holds comes after that, so that output the files could not keep ends
// as the run's did, but for what lies between (lost).
func (t *Tail) unrecorded(logs *runLogs, u Unrecorded) error {
	if err := t.writeParts(logs); err != nil {
		return err
	}
	var lost int64
	var rest [2]claim.Tail
	if r := logs.run; r != nil && r.Attempt == u.Run.Attempt {
		if err := logs.copy(t.Stdout, t.Stderr); err != nil {
			return err
		}
		if u.Run.Tails != nil {
			lost, rest = logs.after(*u.Run.Tails)
		}
	}
	if t.Unrecorded != nil {
		t.Unrecorded(u, lost)
	}
	if err := t.writeRest(logs, rest); err != nil {
		return err
	}
	// All of the run is written: its files are not held open, so that
	// removing them makes room.
	if r := logs.run; r != nil && r.Attempt == u.Run.Attempt {
		logs.closeFiles()
		logs.written = true
	}
	return nil
}

// after returns what of tails (of the open run) comes after what was
// written of its files, and how much lies between them: output the files
// could not keep, nor the tails.
func (l *runLogs) after(tails claim.Tails) (lost int64, rest [2]claim.Tail) {
	for s, tail := range [2]claim.Tail{tails.Stdout, tails.Stderr} {
		from := tail.Size - int64(len(tail.Data))
		if tail.Size > l.pos[s] {
			lost += max(0, from-l.pos[s])
			rest[s] = claim.Tail{Data: tail.Data[max(0, l.pos[s]-from):], Size: tail.Size}
		}
	}
	return lost, rest
}

// writeRest writes what after returned of each stream.
func (t *Tail) writeRest(logs *runLogs, rest [2]claim.Tail) error {
	w := [2]io.Writer{t.Stdout, t.Stderr}
	for s, tail := range rest {
		if tail.Size == 0 {
			continue
		}
		if _, err := w[s].Write(tail.Data); err != nil {
			return err
		}
		logs.pos[s] = tail.Size // the files end before it: nothing more of them
	}
	return nil
}

// writeParts takes the Watch's output and writes the parts of the open
// run, in the order they came, each after what its file holds before it
// that was not written yet: so stdout and stderr keep their order, which
// reading the two files in turn cannot. Parts of a run not yet open wait
// for it; those of a run ended are in what its end wrote. Dropped parts
// (a Tail that fell behind) leave the run to its files again.
func (t *Tail) writeParts(logs *runLogs) error {
	if t.Watch == nil {
		return nil
	}
	parts, dropped := t.Watch.Output()
	t.parts = append(t.parts, parts...)
	if dropped {
		t.parts, logs.live, logs.dropped = nil, false, true
		return nil
	}
	if logs.run == nil {
		return nil
	}
	w := [2]io.Writer{t.Stdout, t.Stderr}
	keep := t.parts[:0]
	for _, p := range t.parts {
		switch {
		case p.Run > logs.run.Attempt:
			keep = append(keep, p)
		case p.Run == logs.run.Attempt && !logs.dropped:
			if err := logs.part(p, w[p.Stream]); err != nil {
				return err
			}
		}
	}
	clear(t.parts[len(keep):])
	t.parts = keep
	return nil
}

// runLogs is the open run's two log files, read as they grow, and how much
// of each was written out. A file the run has not created yet is looked
// for again on the next copy. Live: the run's output comes as the worker
// copies it (Tail.writeParts), and the files are read only for what a
// part skips over, and at the run's end.
type runLogs struct {
	run     *claim.Run
	files   [2]*os.File
	pos     [2]int64
	live    bool
	dropped bool // parts of this run were dropped: its files only
	written bool // all of the run was written (Tail.unrecorded): its files are read no more
}

func (l *runLogs) open(r claim.Run) {
	l.close()
	l.run = &r
}

// copy writes what was added to both files.
func (l *runLogs) copy(stdout, stderr io.Writer) error {
	return errors.Join(l.copyTo(0, stdout, -1), l.copyTo(1, stderr, -1))
}

// part writes part p of stream p.Stream: what its file holds before it and
// was not written, then what of p was not.
func (l *runLogs) part(p Part, w io.Writer) error {
	s := p.Stream
	if err := l.copyTo(s, w, p.Off); err != nil {
		return err
	}
	if end := p.Off + int64(len(p.Data)); l.pos[s] >= p.Off && end > l.pos[s] {
		if _, err := w.Write(p.Data[l.pos[s]-p.Off:]); err != nil {
			return err
		}
		l.pos[s] = end
	}
	l.live = true
	return nil
}

// copyTo writes stream s's file from what was written of it up to end
// (-1: all of it), opening it on the first call that finds it.
func (l *runLogs) copyTo(s int, w io.Writer, end int64) error {
	if l.run == nil || l.run.Host != HostID() || l.written {
		return nil // another host's files are not here (Tail.kept)
	}
	if end >= 0 && end <= l.pos[s] {
		return nil
	}
	path := [2]string{l.run.StdoutPath, l.run.StderrPath}[s]
	if l.files[s] == nil {
		f, err := openLog(path)
		if f == nil {
			return err
		}
		l.files[s] = f
	}
	n := int64(math.MaxInt64 - l.pos[s])
	if end >= 0 {
		n = end - l.pos[s]
	}
	copied, err := io.Copy(w, io.NewSectionReader(l.files[s], l.pos[s], n))
	l.pos[s] += copied
	if err != nil {
		return fmt.Errorf("copy log %s: %w", path, err)
	}
	return nil
}

func (l *runLogs) close() {
	l.closeFiles()
	*l = runLogs{}
}

// closeFiles closes the files; a copy opens them again.
func (l *runLogs) closeFiles() {
	for s, f := range l.files {
		if f != nil {
			f.Close()
			l.files[s] = nil
		}
	}
}

// openLog opens a log file for reading; nil and no error when it does not
// exist (yet). It follows no symlink, neither at the file nor at the job's
// log directory: whoever could plant one would make queuectl print (or
// serve) any file its user can read. A FIFO or device is refused too.
func openLog(path string) (*os.File, error) {
	if err := realDir(filepath.Dir(path)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("open log: %s is a symbolic link; queuectl follows no link inside its home", path)
	}
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open log: %s is not a regular file", path)
	}
	return f, nil
}

// realDir refuses a log directory that is a symbolic link or no directory.
func realDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("log directory: %w", err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("log directory %s is a symbolic link; queuectl follows no link inside its home", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("log directory %s is not a directory", dir)
	}
	return nil
}

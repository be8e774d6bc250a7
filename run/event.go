package run

import (
	"fmt"
	"strings"
	"time"
)

// Event is one thing a worker did that the person or the log shipper
// watching it should know: Worker.Events receives each as it happens, from
// the goroutine where it happened. The CLI prints an event's String as a
// line of text, or its fields as one JSON object (cli/eventlog.go).
//
// To add an event: add a Kind below, fill the fields that apply where it
// happens (w.emit(Event{Kind: EventX, Job: …})), and give it a sentence in
// String. Nothing else changes: the JSON form prints every field that is set,
// and Level makes it a warning if its Kind is listed there.
type Event struct {
	Kind       EventKind
	Time       time.Time // set by emit
	Job        string
	Run        int // the run's number, which names its log files
	Attempt    int // runs that count toward MaxRetries, this one included
	MaxRetries int
	ExitCode   *int
	Duration   time.Duration // how long the run took
	RetryAt    time.Time     // failed: not claimed again before then
	Err        string        // why the run failed, or what went wrong
	Worker     string        // start, stop: this worker; lost: the worker that lost the run
	PID        int           // lost: the lost worker's pid
	Host       string        // lost: the lost worker's host
	Slots      int           // start: jobs at a time; stopping: jobs still running
	Hooks      int           // stopping: hooks still running
	Queues     []string      // start: the queues served (none: every queue)
	Hook       string        // hook: on_success, on_failure or on_dead
	Schedule   string        // scheduled, skipped: the schedule's name
	Due        time.Time     // scheduled, skipped: the due time
	Settings   []string      // settings: the config keys whose values changed
	Waits      string        // disk_full: what waits for room
}

// EventKind names an event; it is the "event" field of a JSON log line.
type EventKind string

// Events of a worker, in the order a job meets them.
const (
	EventStart       EventKind = "start"       // registered: Worker, Slots, Queues
	EventStarted     EventKind = "started"     // a run began: Job, Run, Attempt, MaxRetries
	EventCompleted   EventKind = "completed"   // Job, Run, Attempt, Duration
	EventFailed      EventKind = "failed"      // Job, Run, Attempt, MaxRetries, ExitCode, Err, Duration, RetryAt
	EventDead        EventKind = "dead"        // the job is dead: Job, Run, Attempt, ExitCode, Err
	EventInterrupted EventKind = "interrupted" // a hard stop put the job back to pending: Job, Run
	EventLost        EventKind = "lost"        // a run lost with its worker was recovered: Job, Run, Worker, PID, Host
	EventDropped     EventKind = "dropped"     // this worker's run had been recovered by another: result dropped
	EventCanceled    EventKind = "canceled"    // the job was canceled: its run stopped: Job, Run, ExitCode, Duration
	EventPaused      EventKind = "paused"      // queues this worker serves are paused: Queues ("*": every queue)
	EventResumed     EventKind = "resumed"     // queues this worker serves were resumed: Queues
	EventStopping    EventKind = "stopping"    // asked to stop: Slots jobs and Hooks hooks still running
	EventStop        EventKind = "stop"        // Run is returning: Worker
	EventWarning     EventKind = "warning"     // something went wrong and is retried: Err
	EventUnreachable EventKind = "unreachable" // the store cannot be reached: Err; running jobs go on, none is claimed
	EventReachable   EventKind = "reachable"   // the store is back after Duration: claiming goes on
	EventDiskFull    EventKind = "disk_full"   // a write found no room: Err names where; running jobs go on, what they write next waits
	EventDiskRoom    EventKind = "disk_room"   // writes go through again after Duration: Err is the directory that was full
	EventFenced      EventKind = "fenced"      // the lease (Duration) lapsed unrenewed: Slots runs stopped, to run again
	EventRegistered  EventKind = "registered"  // the registration was gone (reaped as dead) and is back: Worker
	EventHook        EventKind = "hook"        // a finish hook ran: Job, Run, Hook, Err (empty: it exited 0)
	EventScheduled   EventKind = "scheduled"   // a schedule's due time made a job: Schedule, Due, Job (Err: it made none)
	EventSkipped     EventKind = "skipped"     // a due time found its last job still live: Schedule, Due, Job
	EventSettings    EventKind = "settings"    // `config set` changed Settings: read at a heartbeat (settings.go)
)

// Level is "warn" for events that report trouble, and for the end of an
// outage (so that a log kept to warnings says both); "info" for the others.
func (e Event) Level() string {
	switch e.Kind {
	case EventWarning, EventDropped, EventUnreachable, EventReachable, EventDiskFull, EventDiskRoom, EventFenced, EventRegistered:
		return "warn"
	case EventHook, EventScheduled:
		if e.Err != "" {
			return "warn"
		}
	}
	return "info"
}

// String is the event as a sentence for a terminal or journald.
func (e Event) String() string {
	run := fmt.Sprintf("job %s", e.Job)
	switch e.Kind {
	case EventStart:
		queues := "every queue"
		if len(e.Queues) > 0 {
			queues = "queues " + strings.Join(e.Queues, ", ")
		}
		return fmt.Sprintf("worker %s started: %d slot(s), %s", e.Worker, e.Slots, queues)
	case EventStarted:
		return fmt.Sprintf("%s started (attempt %d/%d)", run, e.Attempt, e.MaxRetries)
	case EventCompleted:
		return fmt.Sprintf("%s completed in %s", run, seconds(e.Duration))
	case EventFailed:
		return fmt.Sprintf("%s failed (%s) after %s, attempt %d/%d; retry in %s at %s", run, why(e), seconds(e.Duration),
			e.Attempt, e.MaxRetries, seconds(time.Until(e.RetryAt).Round(time.Second)), e.RetryAt.Local().Format("15:04:05"))
	case EventDead:
		return fmt.Sprintf("%s is dead after %d attempt(s) (%s)", run, e.Attempt, why(e))
	case EventInterrupted:
		return fmt.Sprintf("%s stopped by the worker's shutdown; pending again", run)
	case EventLost:
		return fmt.Sprintf("%s: run %d lost with worker %s (pid %d on %s) recovered; pending again", run, e.Run, e.Worker, e.PID, e.Host)
	case EventDropped:
		return fmt.Sprintf("%s: run %d was recovered by another worker while it ran; its result is dropped", run, e.Run)
	case EventCanceled:
		return fmt.Sprintf("%s canceled: run %d stopped after %s (%s)", run, e.Run, seconds(e.Duration), why(e))
	case EventPaused:
		return fmt.Sprintf("paused: %s; no new job starts there until `%s` (running jobs go on)",
			pausedWords(e.Queues), resumeCommand(e.Queues))
	case EventResumed:
		return fmt.Sprintf("resumed: %s", pausedWords(e.Queues))
	case EventStopping:
		var what string
		switch {
		case e.Hooks == 0:
			what = fmt.Sprintf("%d running job(s)", e.Slots)
		case e.Slots == 0:
			what = fmt.Sprintf("%d running hook(s)", e.Hooks)
		default:
			what = fmt.Sprintf("%d running job(s) and %d hook(s)", e.Slots, e.Hooks)
		}
		return "stopping: letting " + what + " finish; signal again to stop them now"
	case EventStop:
		return fmt.Sprintf("worker %s stopped", e.Worker)
	case EventWarning:
		return e.Err
	case EventUnreachable:
		return fmt.Sprintf("store unreachable: %s; running jobs go on, no job is claimed until it is back", e.Err)
	case EventReachable:
		return fmt.Sprintf("store reachable again after %s; claiming jobs again", seconds(e.Duration))
	case EventDiskFull:
		return fmt.Sprintf("%s; until there is room, %s", e.Err, e.Waits)
	case EventDiskRoom:
		where := "the disk"
		if e.Err != "" {
			where = e.Err
		}
		return fmt.Sprintf("room again on %s after %s: ended runs are recorded, jobs claimed again", where, seconds(e.Duration))
	case EventFenced:
		return fmt.Sprintf("lease of %s lapsed while the store was unreachable: %d run(s) stopped, to run again once it is back", seconds(e.Duration), e.Slots)
	case EventRegistered:
		return fmt.Sprintf("worker %s was taken for dead while the store was unreachable, and removed from the registry: registered again", e.Worker)
	case EventHook:
		if e.Err != "" {
			return fmt.Sprintf("%s: %s hook failed: %s", run, e.Hook, e.Err)
		}
		return fmt.Sprintf("%s: %s hook ran", run, e.Hook)
	case EventScheduled:
		due := e.Due.Local().Format("2006-01-02 15:04 MST")
		if e.Err != "" {
			return fmt.Sprintf("schedule %s: due %s, no job: %s", e.Schedule, due, e.Err)
		}
		return fmt.Sprintf("schedule %s: due %s, enqueued %s", e.Schedule, due, run)
	case EventSettings:
		var now, next, later []string
		for _, k := range e.Settings {
			switch {
			case StartKey(k):
				later = append(later, k)
			case RetentionKey(k):
				now = append(now, k)
			default:
				next = append(next, k)
			}
		}
		var parts []string
		if len(now) > 0 {
			parts = append(parts, strings.Join(now, ", ")+" now")
		}
		if len(next) > 0 {
			parts = append(parts, strings.Join(next, ", ")+" from the next run on")
		}
		if len(later) > 0 {
			parts = append(parts, strings.Join(later, ", ")+" once this worker starts again")
		}
		return "settings changed: " + strings.Join(parts, "; ")
	case EventSkipped:
		return fmt.Sprintf("schedule %s: due %s, skipped: %s from an earlier due time is still live", e.Schedule,
			e.Due.Local().Format("2006-01-02 15:04 MST"), run)
	}
	return fmt.Sprintf("%s %s", e.Kind, e.Job)
}

// why says how a run failed: its exit code, or the error that stopped it.
func why(e Event) string {
	if e.ExitCode != nil && (e.Err == "" || strings.HasPrefix(e.Err, "exit status")) {
		return fmt.Sprintf("exit %d", *e.ExitCode)
	}
	if e.ExitCode != nil {
		return fmt.Sprintf("%s, exit %d", e.Err, *e.ExitCode)
	}
	return e.Err
}

// seconds prints a duration the way people read one: 1.2s, 340ms, 4m0s.
func seconds(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// emit hands e to Events, stamped with the time.
func (w *Worker) emit(e Event) {
	if w.Events == nil {
		return
	}
	e.Time = time.Now()
	w.Events(e)
}

// logf reports a diagnostic: an EventWarning, or a line to Log.
func (w *Worker) logf(format string, args ...any) {
	switch {
	case w.Events != nil:
		w.emit(Event{Kind: EventWarning, Err: fmt.Sprintf(format, args...)})
	case w.Log != nil:
		w.Log(format, args...)
	}
}

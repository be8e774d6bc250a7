package spool

import (
	"fmt"
	"strings"
	"time"

	"github.com/queuectl/queuectl/report"
)

// Event is one thing a Watcher did with the spool: Watcher.Events receives
// each as it happens. The CLI prints an event's String as a line of text, or
// its fields as one JSON object (cli/eventlog.go), beside a worker's events.
//
// To add an event: add a Kind below, emit it where it happens
// (w.emit(Event{Kind: EventX, …})), and give it a sentence in String. The
// JSON form prints every field that is set.
type Event struct {
	Kind  EventKind
	Time  time.Time // set by emit
	File  string    // the spool file's name
	Job   string    // the job it became, or the job that holds its unique_key
	Key   string    // skipped: the unique_key
	State string    // skipped: the state of the job holding the key
	Err   string    // rejected: what is wrong with the file; unsafe, warning: what went wrong
	Path  string    // rejected: the reason file; watching, unsafe, safe: the spool directory
	Count int       // adopted: how many files
	// Rearmed: redriven, the jobs Job's death had made dead that came
	// back with it, pending and waiting for it again; Left: those that
	// stay dead, a live job holding their unique_key (as dlq retry says).
	Rearmed, Left []string
}

// EventKind names an event; it is the "event" field of a JSON log line.
type EventKind string

// Events of a spool watcher.
const (
	EventWatching EventKind = "watching" // Run began: Path
	EventIngested EventKind = "ingested" // File became Job
	EventRedriven EventKind = "redriven" // File, a dead/ file dropped back, made dead Job pending
	EventSkipped  EventKind = "skipped"  // File skipped: Job holds its unique_key Key and is State
	EventRejected EventKind = "rejected" // File moved to rejected/: Err, reason in Path
	EventUnsafe   EventKind = "unsafe"   // the spool (Path) is unsafe: Err; nothing is ingested
	EventSafe     EventKind = "safe"     // the spool (Path) is safe again: ingestion resumes
	EventWarning  EventKind = "warning"  // something went wrong and is retried: Err
	EventIgnored  EventKind = "ignored"  // File is not a *.json file: left alone, said once per name
	EventAdopted  EventKind = "adopted"  // Count files a stopped ingester had taken are ingested now
	// File was ingested as Job before an ingester stopped, and only now
	// removed: the job was committed once, and is not ingested again.
	EventRecovered EventKind = "recovered"
)

// Level is "warn" for events that report trouble, "info" for the others.
func (e Event) Level() string {
	switch e.Kind {
	case EventRejected, EventUnsafe, EventWarning:
		return "warn"
	}
	return "info"
}

// String is the event as a sentence for a terminal or journald.
func (e Event) String() string {
	switch e.Kind {
	case EventWatching:
		return fmt.Sprintf("watching spool %s", shown(e.Path))
	case EventIngested:
		return fmt.Sprintf("ingested %s as job %s", shown(e.File), e.Job)
	case EventRedriven:
		s := fmt.Sprintf("%s re-drove dead job %s", shown(e.File), e.Job)
		if len(e.Rearmed) > 0 {
			s += fmt.Sprintf("; %s came back with it, waiting again", report.JobNames(e.Rearmed))
		}
		if len(e.Left) > 0 {
			s += fmt.Sprintf("; still dead, as another job holds the unique_key: %s (queuectl dlq retry once that job is done)", strings.Join(e.Left, ", "))
		}
		return s
	case EventSkipped:
		return fmt.Sprintf("skipped %s: job %s with unique_key %q is still %s", shown(e.File), e.Job, e.Key, e.State)
	case EventRejected:
		return fmt.Sprintf("rejected %s (see %s)", e.Err, shown(e.Path))
	case EventUnsafe:
		return fmt.Sprintf("spool %s is unsafe, not ingesting it: %s", shown(e.Path), e.Err)
	case EventSafe:
		return fmt.Sprintf("spool %s is safe again; ingesting it", shown(e.Path))
	case EventWarning:
		return e.Err
	case EventIgnored:
		return fmt.Sprintf("ignoring %s in the spool: only *.json files are ingested", shown(e.File))
	case EventAdopted:
		return fmt.Sprintf("adopted %d file(s) a stopped ingester had taken", e.Count)
	case EventRecovered:
		return fmt.Sprintf("%s was ingested as job %s before an ingester stopped; removed the file", shown(e.File), e.Job)
	}
	return fmt.Sprintf("%s %s", e.Kind, shown(e.File))
}

// emit hands e to Events, stamped with the time.
func (w *Watcher) emit(e Event) {
	if w.Events == nil {
		return
	}
	e.Time = time.Now()
	w.Events(e)
}

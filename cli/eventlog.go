package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
	"github.com/urfave/cli/v2"
)

// logFlags are the flags of the commands that run for long and speak on
// stderr: worker start and watch.
func logFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only warnings and errors, not each event"},
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "`FORMAT` of the lines on stderr: text, or json (one object a line)"},
	}
}

// eventLog prints the events of a worker (run.Event) and of a spool watcher
// (spool.Event) on stderr: one sentence a line ("queuectl: job x started
// (attempt 1/3)"), or with --log-format json one JSON object a line for log
// shippers. --quiet keeps only warnings. Events come from many goroutines
// (slots, reaper, watcher); lines never interleave. New kinds of events need
// nothing here: see run.Event and spool.Event.
type eventLog struct {
	mu    sync.Mutex
	w     io.Writer
	json  bool
	quiet bool
	// home, db and watched complete the start-up line; db is the store's
	// location as claim.RedactLocation shows it, without a password.
	home, db string
	watched  bool
	// held keeps lines back until the worker's start-up line is out, so
	// that it comes first although the spool is read before the worker
	// registers; nil once it is out (or when nothing is held).
	held []logLine
	hold bool
	// out holds lines not yet written: a busy worker or ingester prints a
	// line or two per job, and one write per line cost it a system call
	// each. They are written flushDelay after the first of them came,
	// at a warning, the start-up and the stop line at once, and by close.
	out     bytes.Buffer
	flusher *time.Timer
}

// flushDelay is how late a line may reach stderr.
const flushDelay = 10 * time.Millisecond

// flushSize is how many bytes of lines are written at once at most late.
const flushSize = 64 << 10

// A command that logs events runs for long, with jobs in hand: one whose
// stderr's reader goes away goes on without its lines (survivePipe).
func newEventLog(c *cli.Context) (*eventLog, error) {
	l := &eventLog{w: c.App.ErrWriter, quiet: c.Bool("quiet")}
	switch f := c.String("log-format"); f {
	case "text":
	case "json":
		l.json = true
	default:
		return nil, withHint(usagef("--log-format %q: write text or json", f), c.Command.HelpName+" --log-format json")
	}
	survivePipe()
	return l, nil
}

// logLine is one event as a JSON object. Fields are only ever added.
type logLine struct {
	Time       time.Time  `json:"time"`
	Level      string     `json:"level"`
	Event      string     `json:"event"`
	Msg        string     `json:"msg"`
	Job        string     `json:"job,omitempty"`
	Run        int        `json:"run,omitempty"`
	Attempt    int        `json:"attempt,omitempty"`
	MaxRetries int        `json:"max_retries,omitempty"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	DurationMS *int64     `json:"duration_ms,omitempty"`
	RetryAt    *time.Time `json:"retry_at,omitempty"`
	Error      string     `json:"error,omitempty"`
	Worker     string     `json:"worker,omitempty"`
	PID        int        `json:"pid,omitempty"`
	Host       string     `json:"host,omitempty"`
	Slots      int        `json:"slots,omitempty"`
	Hooks      int        `json:"hooks,omitempty"`
	Queues     []string   `json:"queues,omitempty"`
	Settings   []string   `json:"settings,omitempty"`
	Home       string     `json:"home,omitempty"`
	DB         string     `json:"db,omitempty"`
	Spool      *bool      `json:"spool,omitempty"`
	File       string     `json:"file,omitempty"`
	UniqueKey  string     `json:"unique_key,omitempty"`
	State      string     `json:"state,omitempty"`
	Path       string     `json:"path,omitempty"`
	Rearmed    []string   `json:"rearmed,omitempty"` // a dead/ file's re-drive: the jobs that came back
	Left       []string   `json:"left,omitempty"`    // and those that stay dead, their unique_key held
	Files      int        `json:"files,omitempty"`   // adopted: how many files
}

// worker prints a worker's event.
func (l *eventLog) worker(e run.Event) {
	line := logLine{Time: e.Time, Level: e.Level(), Event: string(e.Kind), Msg: e.String(), Job: e.Job, Run: e.Run,
		Attempt: e.Attempt, MaxRetries: e.MaxRetries, ExitCode: e.ExitCode, Error: e.Err, Worker: e.Worker,
		PID: e.PID, Host: e.Host, Slots: e.Slots, Hooks: e.Hooks, Queues: e.Queues, Settings: e.Settings}
	if e.Duration > 0 {
		ms := e.Duration.Milliseconds()
		line.DurationMS = &ms
	}
	if !e.RetryAt.IsZero() {
		at := e.RetryAt.UTC()
		line.RetryAt = &at
	}
	if e.Kind == run.EventStart {
		watched := "spool watched"
		if !l.watched {
			watched = "spool not watched (--no-spool)"
		}
		line.Msg += fmt.Sprintf(", home %s, db %s, %s", l.home, l.db, watched)
		line.Home, line.DB, line.Spool = l.home, l.db, &l.watched
		l.print(line)
		l.release()
		return
	}
	l.print(line)
}

// holdUntilStart keeps every line back until the worker's start-up line.
func (l *eventLog) holdUntilStart() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hold = true
}

// release prints the lines held back, and holds no more. It holds mu
// throughout: a line another goroutine logs meanwhile comes after them.
func (l *eventLog) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.held
	l.held, l.hold = nil, false
	for _, line := range held {
		l.writeLocked(line)
	}
}

// spool prints a spool watcher's event.
func (l *eventLog) spool(e spool.Event) {
	l.print(logLine{Time: e.Time, Level: e.Level(), Event: string(e.Kind), Msg: e.String(), Job: e.Job,
		Error: e.Err, File: e.File, UniqueKey: e.Key, State: e.State, Path: e.Path, Rearmed: e.Rearmed, Left: e.Left, Files: e.Count})
}

// say prints an event of the command itself (watch's stop line).
func (l *eventLog) say(event, format string, args ...any) {
	l.print(logLine{Time: time.Now(), Level: "info", Event: event, Msg: fmt.Sprintf(format, args...)})
}

// warnf prints a diagnostic of the command itself.
func (l *eventLog) warnf(format string, args ...any) {
	l.print(logLine{Time: time.Now(), Level: "warn", Event: "warning", Msg: fmt.Sprintf(format, args...)})
}

func (l *eventLog) print(line logLine) {
	if l.quiet && line.Level == "info" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hold && line.Event != string(run.EventStart) {
		l.held = append(l.held, line)
		return
	}
	l.writeLocked(line)
}

// writeLocked writes line, or keeps it in out for a flush; l.mu is held.
func (l *eventLog) writeLocked(line logLine) {
	if !l.json {
		fmt.Fprintf(&l.out, "queuectl: %s\n", line.Msg)
	} else {
		line.Time = line.Time.UTC()
		enc := json.NewEncoder(&l.out)
		enc.SetEscapeHTML(false) // a command's > and & stay as they are
		enc.Encode(line)
	}
	switch {
	case line.Level != "info" || line.Event == string(run.EventStart) || line.Event == string(run.EventStop) || l.out.Len() >= flushSize:
		l.flushLocked()
	case l.flusher == nil:
		l.flusher = time.AfterFunc(flushDelay, l.flush)
	}
}

// flush writes the pending lines.
func (l *eventLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
}

func (l *eventLog) flushLocked() {
	if l.flusher != nil {
		l.flusher.Stop()
		l.flusher = nil
	}
	if l.out.Len() > 0 {
		l.w.Write(l.out.Bytes())
		l.out.Reset()
	}
}

// close writes the lines still pending, the held ones included; the
// command's last word (an error, say) comes after them.
func (l *eventLog) close() {
	l.release()
	l.flush()
}

// Package report renders queuectl data for people (tables, `key: value`
// lines) and for scripts (JSON). It owns every output format of the CLI;
// it never reads the store and never writes anywhere but the io.Writer it
// is given.
//
// # JSON contract
//
// Field names and types below are a public, stable interface: scripts read
// them. Fields are only ever added.
//
// Times are RFC 3339 in UTC with a `Z` and as many fractional digits as
// needed (Go's time.RFC3339Nano: "2026-11-21T05:45:00Z",
// "2026-11-21T05:45:00.25Z"). Durations are Go duration strings ("30m0s").
//
// A job object (list, show, dlq list, enqueue --json) always has
//
//	id, command, state, attempts, max_retries, backoff_base, priority,
//	queue, run_count, created_at, updated_at
//
// where attempts counts the runs that count toward max_retries and
// run_count every run the job ever had. These appear only when set:
//
//	lost         runs lost to crashed workers since the last re-drive
//	run_at       the schedule the job was enqueued with
//	run_after    only while pending or failed: not claimed before this
//	             (the schedule, or the end of a failed run's backoff)
//	next_retry_at  only while failed: the same time as run_after
//	timeout      Go duration
//	env_names    array of the names in the job's env, sorted
//	env          object of strings: only in `show --env`. Environment
//	             values are secrets (tokens, passwords) and no view
//	             prints them unless asked; env was in every job object
//	             before, the one field ever taken away.
//	cwd, unique_key
//	umask        the umask the job's shell runs with, as a string of four
//	             octal digits ("0077"): `run`'s caller's; without it, the
//	             job runs with its worker's
//	worker       id of the worker holding it (while processing)
//	lease_until  while processing
//	last_error, exit_code (a number; 0 is shown), finished_at
//	cancel_requested_at  when `cancel` was asked of it (while processing:
//	             its worker is stopping it)
//
// `show --json` prints the job object plus "runs": an array of run
// objects, first run first. The count is called run_count, not runs, so
// that no key changes its type from one command to the next.
//
// A run object always has attempt, worker, host, pid, started_at; and when
// set: outcome (completed, failed, lost, interrupted, canceled; absent while running),
// exit_code, error, ended_at, duration_ms (a number, once ended), stdout
// and stderr (log file paths).
//
// `status --json` is one object: pending, processing, completed, failed,
// dead, canceled, total, spool_waiting, rejected, workers, an array of
// {id, host, pid, slots, queues, started_at, heartbeat_at, stopping}
// (queues is [] for a worker that serves every queue), and paused_queues,
// an array of queue names ("*": every queue is paused), [] when none.
//
// `enqueue --json` prints one job object for one job, an array for several.
//
// `config list --json` is an array of {key, value, default, help} in the
// order of claim.ConfigKeys: an array keeps that order and the defaults,
// which a plain {"key": "value"} object would lose.
//
// `bench --json` is an array of {scenario, rate_per_s, p50, p99, unit,
// limit, ratio, target, met}; rate_per_s, p50, p99 and unit only where
// measured (see Printer.Bench).
//
// Every list is exactly one JSON array, `[]` when empty, never null.
package report

import (
	"encoding/json"
	"io"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Printer renders to Out. JSON selects JSON output. Color enables ANSI
// colour for state words; main sets it only when stdout is a terminal and
// NO_COLOR is unset. Now is the clock for ages ("3m ago"); nil means
// time.Now. Methods return the first write error.
type Printer struct {
	Out   io.Writer
	JSON  bool
	Color bool
	Now   func() time.Time
	// Host is this host's id (run.HostID): show names the log files of
	// other hosts' runs as host:path. Empty: no run is told apart.
	Host string
	// FromTail says which streams of a run show reads from the tail kept
	// with the run, as its log file cannot be read here (another host's
	// run, a file removed): show prints those tails. Nil: none.
	FromTail func(r claim.Run, stderr bool) bool
	// Printed says whether a stream of a run printed anything: show names
	// the log files of those that did, and "(no output)" for the others,
	// which have no file. Nil: every file is named.
	Printed func(r claim.Run, stderr bool) bool
	// Env shows the values of a job's env (`show --env`); otherwise only
	// its names are shown.
	Env bool
}

func (p Printer) now() time.Time {
	if p.Now == nil {
		return time.Now()
	}
	return p.Now()
}

// WriteJSON writes v as JSON indented by two spaces, with a trailing
// newline. HTML characters stay as they are: commands are full of `>`
// and `&`, and \u003e would make them unreadable.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

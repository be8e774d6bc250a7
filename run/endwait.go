package run

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A Tail with a Watch is told by its worker that a run ended and that its
// end waits for room (Nudges.Unrecorded). A Tail without one, following
// the job in the store, sees its own way that this is so: the store's disk
// is full (the store says so without a write: claim.Store.Full); the run
// is of this host and its command started (its start is recorded, or a
// log file of it is there); its worker lives; and no process of the run
// is left, in its group or carrying its mark (the worker ends a run once
// they are all gone), yet its end is not recorded. Each holds of a run
// that ended on a full disk; none of a run that merely runs long, whose
// processes live. A worker may find room its own way (SQLite's free
// pages), so it must hold for endWaitAfter before it is told, once a run.
// A worker on another host is not seen so (its processes are not this
// host's to read), nor a store on PostgreSQL (its server's disk is not).

// endWaitAfter is how long a Tail without a Watch sees a run of this host
// over, its end unrecorded on a full disk, before it tells so: the worker
// tries to record an end at once and again within a second and a half,
// and one that finds room meanwhile is read by the next look.
const endWaitAfter = 2 * time.Second

// endWaitEvery bounds how often the processes are looked through: only on
// a full disk, but a look comes every few hundred milliseconds.
const endWaitEvery = 500 * time.Millisecond

// endWait is what a Tail without a Watch saw of its open run: since when
// it looked over with its end waiting for room (zero: it did not at the
// last check), when it last checked, and whether that was told.
type endWait struct {
	attempt int
	since   time.Time
	checked time.Time
	told    bool
}

// endWaits reports whether run r of job j, just read and not ended, ended
// on this host but waits to be recorded on a full disk, for endWaitAfter:
// then it returns the run as it stands, with the store's error, once for
// the run.
func (t *Tail) endWaits(j claim.Job, r claim.Run) (Unrecorded, bool) {
	if t.Watch != nil {
		return Unrecorded{}, false // its worker tells
	}
	if t.wait.attempt != r.Attempt {
		t.wait = endWait{attempt: r.Attempt}
	}
	if t.wait.told || time.Since(t.wait.checked) < endWaitEvery {
		return Unrecorded{}, false
	}
	t.wait.checked = time.Now()
	var full error
	if j.State == claim.Processing && j.Runs == r.Attempt && r.Host == HostID() {
		full = t.Store.Full() // first: a statfs, where over reads the processes
	}
	if full == nil || !over(r) {
		t.wait.since = time.Time{}
		return Unrecorded{}, false
	}
	if t.wait.since.IsZero() {
		t.wait.since = time.Now()
	}
	if time.Since(t.wait.since) < endWaitAfter {
		return Unrecorded{}, false
	}
	t.wait.told = true
	return Unrecorded{Run: r, Err: full}, true
}

// over reports whether run r, of this host and not recorded as ended, ran
// its command and has no process left while its worker lives: it ended,
// as its worker sees it. A run whose start was not recorded yet (it is
// recorded a second in, or with the end) is known by its log files and
// its mark, which only Linux shows; a zombie counts as a process, its
// worker has not reaped it yet.
func over(r claim.Run) bool {
	if r.PID <= 0 || !r.EndedAt.IsZero() || !alive(r.PID) {
		return false
	}
	if r.ExecAt.IsZero() && !present(r.StdoutPath) && !present(r.StderrPath) {
		return false // not started, as far as can be seen
	}
	if r.PGID > 0 && !errors.Is(syscall.Kill(-r.PGID, 0), syscall.ESRCH) {
		return false
	}
	if runtime.GOOS != "linux" {
		return r.PGID > 0 // only the group can be seen
	}
	return len(leftovers(r.PGID, runMark(r.WorkerID, r.JobID, r.Attempt), false, true)) == 0
}

// present reports whether a file (of any kind) is at path.
func present(path string) bool {
	_, err := os.Lstat(path)
	return path != "" && err == nil
}

package jobs

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// State is where a job is in its life.
type State string

const (
	// Pending jobs wait to be claimed (possibly not before RunAfter).
	Pending State = "pending"
	// Processing jobs are claimed by a worker, which holds a lease on them.
	Processing State = "processing"
	// Completed jobs ran and exited 0.
	Completed State = "completed"
	// Failed jobs ran and failed; they are claimed again after their backoff.
	Failed State = "failed"
	// Dead jobs failed max_retries times (or were lost too often); only
	// `dlq retry` brings them back.
	Dead State = "dead"
	// Held jobs were pending or failed when `hold` took them out of the
	// claim's reach; `release` puts them back to that state, with their
	// place (priority, run_after, seq) and attempts as they were.
	Held State = "held"
	// Canceled jobs were stopped for good by `cancel`; only `restart`
	// brings them back. A processing job becomes canceled once its worker
	// has stopped its processes (Job.CancelAt marks it meanwhile).
	Canceled State = "canceled"
)

// States lists every state in life order.
var States = []State{Pending, Processing, Completed, Failed, Dead, Canceled, Held}

// Finished reports whether st is an end state: completed, dead or canceled.
func (st State) Finished() bool { return st == Completed || st == Dead || st == Canceled }

// ParseState returns the State named s, or an ErrInvalid error.
func ParseState(s string) (State, error) {
	for _, st := range States {
		if string(st) == s {
			return st, nil
		}
	}
	return "", invalidf("unknown state %q (want one of pending, processing, completed, failed, dead, canceled, held)", s)
}

// Errors that callers tell apart with errors.Is. main maps them to exit codes.
var (
	// ErrNoJob means nothing is runnable right now.
	ErrNoJob = errors.New("no runnable job")
	// ErrNotFound means no job has the given id.
	ErrNotFound = errors.New("no such job")
	// ErrConflict means the id exists already, or the job is in the wrong state.
	ErrConflict = errors.New("conflict")
	// ErrInvalid means the input (a job spec, a config value) is not acceptable.
	ErrInvalid = errors.New("invalid input")
	// ErrLost means the caller no longer owns the run it reports on: the run
	// was recovered after the caller's lease lapsed.
	ErrLost = errors.New("run no longer owned by this worker")
	// ErrReplaced means the database file at the store's path is no longer
	// the file the store opened (deleted, moved or replaced), so the store
	// refuses to write on to the old one, where nobody would look.
	ErrReplaced = errors.New("database file replaced")
	// ErrDropped means the queue's tables are gone from the database the
	// store opened: the database or its schema was dropped (and perhaps
	// made anew, empty) while the store was open. The jobs went with them;
	// no retry brings them back.
	ErrDropped = errors.New("the queue's tables are gone")
	// ErrCorrupt means the database says its own content is malformed
	// (SQLite's SQLITE_CORRUPT, SQLITE_NOTADB). No retry mends it: a
	// backup must be restored.
	ErrCorrupt = errors.New("the store is corrupt")
	// ErrDiskFull means a write failed because the file system holding the
	// database has no space left. The message names the directory.
	ErrDiskFull = errors.New("disk full")
	// ErrUnavailable means the database server cannot be reached, or
	// refuses the connection (authentication, no such database), takes no
	// writes (ErrReadOnly), or gave up on a statement (statement_timeout).
	// It is the environment's fault, never a job's: a worker waits and
	// retries.
	ErrUnavailable = errors.New("database unavailable")
	// ErrReadOnly means the database server answers but takes no writes
	// (a standby, or default_transaction_read_only on). It comes wrapped
	// with ErrUnavailable: reads go on, and a worker waits for writes.
	ErrReadOnly = errors.New("the database takes no writes")
)

// Unusable reports whether err says the store can no longer be used by
// this process, however long it waits: its file was replaced (ErrReplaced)
// or is corrupt (ErrCorrupt), or its tables were dropped (ErrDropped). A
// long-running process stops on it.
func Unusable(err error) bool {
	return errors.Is(err, ErrReplaced) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrDropped)
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// NameRule says what ValidID takes, for the messages that refuse a job
// id or a queue name.
const NameRule = "use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"

// ValidID reports whether id may name a job (and so a log directory):
// [A-Za-z0-9][A-Za-z0-9._-]{0,127}. It is written out rather than a regexp
// because compiling that {0,127} costs every command a millisecond or two
// at start-up.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// Job is one job as stored. Optional fields are zero when unset.
type Job struct {
	Seq         int64
	ID          string
	Command     string
	State       State
	Attempts    int
	MaxRetries  int
	BackoffBase int
	Priority    int
	Queue       string
	Runs        int
	Lost        int
	Timeout     time.Duration
	Env         map[string]string
	Cwd         string
	Umask       *int // nil: the worker's (NewJob.Umask)
	UniqueKey   string
	Label       string
	Hooks       Hooks
	Limits      Limits
	// Waiting counts the jobs this one waits for (after) that have not
	// completed; WaitingOn names them. DeadBy is the dependency whose end
	// made it dead. After names every job it was enqueued to run after,
	// met or not, sorted; only a read of the one job (Store.Get) fills it.
	Waiting    int
	WaitingOn  []string
	After      []string
	DeadBy     string
	RunAt      time.Time
	RunAfter   time.Time
	WorkerID   string
	LeaseUntil time.Time
	LastError  string
	ExitCode   *int
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt time.Time
	// PendingReason says why a pending job is not runnable now (Reason*),
	// "" when it is, or is not pending. It is not stored: the Store works
	// it out as it reads the job (see Store.Jobs).
	PendingReason string
	// HeldBack says why a failed job whose retry is due cannot run now:
	// its queue is paused (ReasonPaused) or at its limit (ReasonLimited);
	// "" otherwise. Worked out as PendingReason is, for the tables' REASON
	// (a failed job has no pending_reason).
	HeldBack string
	// CancelAt is when `cancel` was asked of the job; while it is still
	// processing, its worker is stopping it. Cleared by restart.
	CancelAt time.Time
}

// UmaskText is umask m as the umask command prints it (0022), for people
// and JSON; "" for nil, a job that runs with its worker's.
func UmaskText(m *int) string {
	if m == nil {
		return ""
	}
	return fmt.Sprintf("%04o", *m)
}

// Run is one attempt at a job, kept after the job moves on.
type Run struct {
	JobID      string
	Attempt    int
	WorkerID   string
	Host       string
	PID        int
	PGID       int
	StartedAt  time.Time // when it was claimed
	ExecAt     time.Time // when its command started; zero until then
	EndedAt    time.Time
	Outcome    string
	ExitCode   *int
	Error      string
	StdoutPath string
	StderrPath string
	// Hooks says how each finish hook after this run ended, a line each:
	// "on_success ok", "on_dead failed: exit status 1: …".
	Hooks string
	// Confined is what held the run: "cgroup" (no limits, a cgroup),
	// "rlimit" or "cgroup+rlimit"; empty when nothing did.
	Confined string
	// Tails is the end of the run's output, kept with the run when it
	// ended, so that its logs can be read where its files are not (another
	// host, a file removed). Nil when none was kept: the run has not ended,
	// or was lost where no reaper could read its files. Runs leaves the
	// bytes out (Size only); RunsWithTails reads them.
	Tails *Tails
}

// HostName is the hostname part of r.Host (a hostname, a slash and a boot
// id), for people: where r's log files are.
func (r Run) HostName() string {
	name, _, _ := strings.Cut(r.Host, "/")
	return name
}

// TailBytes is how much of each stream of a run's output the store keeps:
// its last 64 KiB.
const TailBytes = 64 << 10

// Tails is the end of a run's stdout and stderr.
type Tails struct {
	Stdout, Stderr Tail
}

// Tail is the end of one stream of a run's output.
type Tail struct {
	Data []byte // the stream's last TailBytes bytes at most
	Size int64  // how many bytes the stream wrote in all
}

// Truncated reports whether the stream wrote more than the store keeps of
// it (TailBytes), so that Data is only its end. Size alone tells, so it
// holds also for the tails of Runs, which leave Data out.
func (t Tail) Truncated() bool { return t.Size > TailBytes }

// kept is t as the store keeps it: its last TailBytes bytes, and a size no
// smaller than what is kept.
func (t Tail) kept() Tail {
	if len(t.Data) > TailBytes {
		t.Data = t.Data[len(t.Data)-TailBytes:]
	}
	t.Size = max(t.Size, int64(len(t.Data)))
	return t
}

// Kept is ts as the store keeps it (see Tail), nil for nil.
func (ts *Tails) Kept() *Tails {
	if ts == nil {
		return nil
	}
	return &Tails{Stdout: ts.Stdout.kept(), Stderr: ts.Stderr.kept()}
}

// Run outcomes, recorded when a run ends.
const (
	OutcomeCompleted   = "completed"
	OutcomeFailed      = "failed"
	OutcomeLost        = "lost"
	OutcomeInterrupted = "interrupted"
	OutcomeCanceled    = "canceled" // stopped by its worker for `cancel`
)

// NeverRan reports whether run r ended without its command starting: put
// back for a cause outside the job (a full disk, no logs/), or stopped
// before it could start. Its start is no news to whoever follows the job.
func (r Run) NeverRan() bool {
	return !r.EndedAt.IsZero() && r.Outcome == OutcomeInterrupted && r.ExecAt.IsZero()
}

// MaxLost is how many runs a job may lose to crashed workers before it is dead.
const MaxLost = 5

// Outcome says what Enqueue did with a NewJob.
type Outcome string

const (
	// Created: a new job was stored.
	Created Outcome = "created"
	// Skipped: a live job with the same unique_key exists; Result.Job is it.
	Skipped Outcome = "skipped"
	// Duplicate: a job from the same spool file (IngestKey) exists already,
	// or existed and was removed (Result.Job then has only its ID).
	Duplicate Outcome = "duplicate"
	// Redriven: a dead job's file came back and the job is pending again.
	Redriven Outcome = "redriven"
)

// Result is what became of one NewJob.
type Result struct {
	Job     Job
	Outcome Outcome
	Err     error // EnqueueEach only
	// Rearmed is, of a Redriven job, what its re-drive did to the jobs
	// its death had made dead (as Store.RetryChain says it).
	Rearmed Rearmed
}

// Rearmed is what a re-drive (dlq retry, restart) did to the jobs the
// re-driven job's death or cancel made dead, down the chain.
type Rearmed struct {
	// Waiting are the jobs pending again, waiting for it as before.
	Waiting []string
	// Left are the jobs that stay dead because a live job holds their
	// unique_key (and with them, unnamed, the jobs waiting for them).
	Left []string
	// Rewaiting are the pending or held jobs that had counted a restarted
	// job as completed and wait for its new run instead.
	Rewaiting []string
}

// Add appends o's jobs to r's.
func (r *Rearmed) Add(o Rearmed) {
	r.Waiting = append(r.Waiting, o.Waiting...)
	r.Left = append(r.Left, o.Left...)
	r.Rewaiting = append(r.Rewaiting, o.Rewaiting...)
}

// Queue is a queue's settings, with how many of its jobs run now.
type Queue struct {
	Name string
	// MaxRunning is how many of the queue's jobs may be processing at once,
	// across every worker, process and host of the store; 0: no limit.
	MaxRunning int
	Running    int // jobs of the queue processing now
	UpdatedAt  time.Time
}

// Editable reports whether a job in st may be edited: it has not run.
func (st State) Editable() bool { return st == Pending || st == Held }

// RunMark is a place in the order of ended runs: by end time, then job id
// and attempt, so that runs ending in the same nanosecond are each read once.
type RunMark struct {
	EndedAt time.Time
	JobID   string
	Attempt int
}

// Mark returns r's place in the order of ended runs.
func (r Run) Mark() RunMark { return RunMark{r.EndedAt, r.JobID, r.Attempt} }

// TailColumns are the values of a run's tail columns, in the order both
// engines store them: stdout_size, stderr_size, stdout_tail, stderr_tail.
// All NULL for nil; a stream that printed nothing has a NULL tail.
func (ts *Tails) TailColumns() [4]any {
	if ts == nil {
		return [4]any{}
	}
	return [4]any{ts.Stdout.Size, ts.Stderr.Size, blob(ts.Stdout.Data), blob(ts.Stderr.Data)}
}

// StartColumns are the run's process group, the start of its command and
// what held it, as column values for the end of the run: NULL where the
// run does not carry them (its start was recorded on its own, or it never
// started), so that the end leaves what is recorded as it is.
func (r Run) StartColumns() (pgid, execAt, confined any) {
	if r.PGID > 0 {
		pgid = r.PGID
	}
	if !r.ExecAt.IsZero() {
		execAt = r.ExecAt.UnixNano()
	}
	if r.Confined != "" {
		confined = r.Confined
	}
	return pgid, execAt, confined
}

// blob is b as a column value: NULL when empty.
func blob(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Engine names, as engines register themselves.
const (
	EngineSQLite   = "sqlite"
	EnginePostgres = "postgres"
)

// EngineFor names the engine for location: postgres:// and postgresql://
// URLs are PostgreSQL, anything else is a SQLite file's path. This is the
// one place that tells the two apart.
func EngineFor(location string) string {
	if scheme, _, ok := strings.Cut(location, "://"); ok && PostgresScheme(scheme) {
		return EnginePostgres
	}
	return EngineSQLite
}

// PostgresScheme reports whether a URL's scheme names PostgreSQL: postgres
// or postgresql, in any case, as schemes are (RFC 3986, 3.1).
func PostgresScheme(scheme string) bool {
	return strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql")
}

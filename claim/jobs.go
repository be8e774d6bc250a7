package claim

import (
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
)

// The job, its spec and its outcomes are package jobs's, which the small
// `queuectl` in front imports without the store: these are their names in
// claim, where every other package takes them from.

type (
	// NewJob is a job as asked for, before it is stored (jobs.NewJob).
	NewJob = jobs.NewJob
	// Job is one job as stored (jobs.Job).
	Job = jobs.Job
	// Run is one attempt at a job (jobs.Run).
	Run = jobs.Run
	// RunMark is a place in the order of ended runs (jobs.RunMark).
	RunMark = jobs.RunMark
	// State is where a job is in its life (jobs.State).
	State = jobs.State
	// Hooks are a job's finish hooks (jobs.Hooks).
	Hooks = jobs.Hooks
	// Limits are a job's resource limits (jobs.Limits).
	Limits = jobs.Limits
	// Tails is the end of a run's stdout and stderr (jobs.Tails).
	Tails = jobs.Tails
	// Tail is the end of one stream of a run's output (jobs.Tail).
	Tail = jobs.Tail
	// Outcome says what Enqueue did with a NewJob (jobs.Outcome).
	Outcome = jobs.Outcome
	// Result is what became of one NewJob (jobs.Result).
	Result = jobs.Result
	// Rearmed is what a re-drive did to the jobs that died with the job
	// re-driven (jobs.Rearmed).
	Rearmed = jobs.Rearmed
	// Queue is a queue's settings (jobs.Queue).
	Queue = jobs.Queue
)

// The states of a job (jobs.State).
const (
	Pending    = jobs.Pending
	Processing = jobs.Processing
	Completed  = jobs.Completed
	Failed     = jobs.Failed
	Dead       = jobs.Dead
	Held       = jobs.Held
	Canceled   = jobs.Canceled
)

// States lists every state in life order.
var States = jobs.States

// DefaultQueue is the queue of a job that names none.
const DefaultQueue = jobs.DefaultQueue

// What Enqueue did with a NewJob (jobs.Outcome).
const (
	Created   = jobs.Created
	Skipped   = jobs.Skipped
	Duplicate = jobs.Duplicate
	Redriven  = jobs.Redriven
)

// Run outcomes, recorded when a run ends.
const (
	OutcomeCompleted   = jobs.OutcomeCompleted
	OutcomeFailed      = jobs.OutcomeFailed
	OutcomeLost        = jobs.OutcomeLost
	OutcomeInterrupted = jobs.OutcomeInterrupted
	OutcomeCanceled    = jobs.OutcomeCanceled
)

// Engine names, as engines register themselves.
const (
	EngineSQLite   = jobs.EngineSQLite
	EnginePostgres = jobs.EnginePostgres
)

// Bounds of a job (see jobs).
const (
	MaxArgLen      = jobs.MaxArgLen
	MaxExecTotal   = jobs.MaxExecTotal
	MaxLabel       = jobs.MaxLabel
	MaxLost        = jobs.MaxLost
	MaxRetriesMost = jobs.MaxRetriesMost
	MaxSpecLine    = jobs.MaxSpecLine
	TailBytes      = jobs.TailBytes
)

// Errors that callers tell apart with errors.Is (see jobs).
var (
	ErrNoJob       = jobs.ErrNoJob
	ErrNotFound    = jobs.ErrNotFound
	ErrConflict    = jobs.ErrConflict
	ErrInvalid     = jobs.ErrInvalid
	ErrLost        = jobs.ErrLost
	ErrReplaced    = jobs.ErrReplaced
	ErrDropped     = jobs.ErrDropped
	ErrCorrupt     = jobs.ErrCorrupt
	ErrDiskFull    = jobs.ErrDiskFull
	ErrUnavailable = jobs.ErrUnavailable
	ErrReadOnly    = jobs.ErrReadOnly
)

// Unusable reports whether err says the store can no longer be used by
// this process (jobs.Unusable).
func Unusable(err error) bool { return jobs.Unusable(err) }

// ValidID reports whether id may name a job (jobs.ValidID).
func ValidID(id string) bool { return jobs.ValidID(id) }

// UmaskText is a job's umask as the umask command prints it, "" for none
// (jobs.UmaskText).
func UmaskText(m *int) string { return jobs.UmaskText(m) }

// NameRule says what ValidID takes (jobs.NameRule).
const NameRule = jobs.NameRule

// HostID is jobs.HostID: this host, as its runs record it.
func HostID() string { return jobs.HostID() }

// ParseState returns the State named s (jobs.ParseState).
func ParseState(s string) (State, error) { return jobs.ParseState(s) }

// ParseSpec decodes one JSON job spec (jobs.ParseSpec).
func ParseSpec(data []byte) (NewJob, error) { return jobs.ParseSpec(data) }

// DuplicateKey refuses (ErrInvalid) JSON that gives a key twice in one
// object, at any depth (jobs.DuplicateKey).
func DuplicateKey(data []byte) error { return jobs.DuplicateKey(data) }

// SpecFields names the fields of a job spec (jobs.SpecFields).
func SpecFields() []string { return jobs.SpecFields() }

// ParseBatch decodes one JSON object or JSON lines (jobs.ParseBatch).
func ParseBatch(data []byte) ([]NewJob, error) { return jobs.ParseBatch(data) }

// ParseStream decodes job specs as they arrive (jobs.ParseStream).
func ParseStream(r io.Reader) iter.Seq2[NewJob, error] { return jobs.ParseStream(r) }

// ParseDuration reads a Go duration or whole seconds (jobs.ParseDuration).
func ParseDuration(s string) (time.Duration, error) { return jobs.ParseDuration(s) }

// ParseSize reads a size in bytes (jobs.ParseSize).
func ParseSize(s string) (int64, error) { return jobs.ParseSize(s) }

// FormatSize writes a size as ParseSize reads it (jobs.FormatSize).
func FormatSize(n int64) string { return jobs.FormatSize(n) }

// NewID returns a unique job id that sorts by creation time (jobs.NewID).
func NewID(now time.Time) string { return jobs.NewID(now) }

// EngineFor names the engine for location (jobs.EngineFor).
func EngineFor(location string) string { return jobs.EngineFor(location) }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// EscapeEnv is env as JSON holds it byte for byte: each name and value
// that is not UTF-8 escaped, which ParseSpec reads back (jobs.EscapeEnv).
func EscapeEnv(env map[string]string) map[string]string { return jobs.EscapeEnv(env) }

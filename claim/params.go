package claim

import (
	"path/filepath"
	"strconv"
	"time"
)

// CancelParams is a cancel: of job ID, or of every unfinished job of Queue.
type CancelParams struct {
	ID, Queue string
	Now       time.Time
}

// RestartParams is a restart: of job ID, or of every job in State. The job
// becomes pending at Now with attempts and lost runs 0, its last result
// and cancel forgotten; its runs counter is kept, so new runs number on
// from the old ones.
type RestartParams struct {
	ID    string
	State State
	Now   time.Time
}

// RunID names one run: a job and its attempt.
type RunID struct {
	JobID   string
	Attempt int
}

// ClaimParams is a claim as the Store asks an engine for it.
type ClaimParams struct {
	Claimant
	Now time.Time
}

// FinishParams is the end of a run, as decided by the Store: the job's next
// state and fields, and the run's outcome.
type FinishParams struct {
	Run         Run   // the run that ends: JobID, Attempt, WorkerID
	State       State // the job's next state
	Uncount     bool  // the run does not count towards max_retries (attempts - 1)
	SetExitCode bool  // the job's exit_code becomes ExitCode
	SetError    bool  // the job's last_error becomes Error ("": none)
	ExitCode    *int  // the run's exit code (nil: none)
	Error       string
	RunAfter    time.Time // the job's new not-before time; zero: unchanged
	Finished    bool      // the job is finished: finished_at = Now
	Outcome     string    // the run's outcome
	Durable     bool      // commit survives a power cut (else: a process crash)
	Now         time.Time
}

// EndDependentsParams names a job that ended for good.
type EndDependentsParams struct {
	ID    string
	State State // dead or canceled
	// Cause is the last_error of the jobs it makes dead (DependencyError);
	// ErrorFor gives that of each job down the chain.
	Cause string
	Now   time.Time
}

// RenewParams is one heartbeat of a worker.
type RenewParams struct {
	// Worker is the worker's registration (StartedAt set), put back when
	// its row is gone; Worker.ID names the worker.
	Worker     WorkerInfo
	LeaseUntil time.Time
	Now        time.Time
}

// Renewal is what one heartbeat of a worker found in the store.
type Renewal struct {
	// Runs are the runs whose leases it renewed: every run the store
	// assigns to the worker (the current run of a processing job that
	// names it). A run the worker holds that is not among them is no
	// longer its to run.
	Runs []RunID
	// Stopping: `worker stop` asked the worker to stop.
	Stopping bool
	// Registered: the worker's row was gone from the registry (a reaper
	// took the worker for dead while it could not reach the store), and
	// the renewal registered it again.
	Registered bool
	// Newer is set when the database's schema, read with the renewal, is
	// newer than this binary knows: a newer queuectl migrated it since
	// the worker opened it. The renewal went through all the same.
	Newer *NewerSchemaError
}

// RecoverParams ends a lost run. The job is dead once it has lost MaxLost
// runs; the engine compares, because the count lives with the job's row and
// must be read in the same statement that changes it.
type RecoverParams struct {
	JobID     string
	Attempt   int
	Tails     *Tails // nil: none kept
	MaxLost   int
	DeadError string
	Now       time.Time
}

// EnqueueParams is a batch of jobs to store, decided and validated by the
// Store.
type EnqueueParams struct {
	Jobs []NewRow
	// Each: a job refused for a conflict gets Result.Err and the others are
	// stored; otherwise the first refusal rolls the batch back.
	Each bool
	Now  time.Time
}

// NewRow is one job to insert: Job holds every stored field (Seq is filled
// in by the engine), plus what only the insert needs.
type NewRow struct {
	Job         Job
	IngestKey   string
	IngestAgain bool // NewJob.IngestAgain: the engine looks the key up among removed jobs'
	Redrive     bool
	// After are the ids the job waits for, each once. The engine stores
	// them with the job and sets Job.Waiting to those not completed, in
	// the same transaction; an id no job has is refused with
	// UnknownDependencyError (ErrInvalid), one that is dead or canceled
	// with DeadDependencyError (ErrConflict).
	After []string
}

// NewRun is the run record of claim c taking job j (already counted, so
// j.Runs is the new attempt) at now. Engines call it to insert the run.
func NewRun(c Claimant, j Job, now time.Time) Run {
	dir := filepath.Join(c.LogDir, j.ID)
	n := strconv.Itoa(j.Runs)
	return Run{JobID: j.ID, Attempt: j.Runs, WorkerID: c.WorkerID, Host: c.Host, PID: c.PID,
		StartedAt: now.UTC(), StdoutPath: filepath.Join(dir, n+".out"), StderrPath: filepath.Join(dir, n+".err")}
}

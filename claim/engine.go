package claim

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"time"
)

// Engine is what a Store keeps its jobs in: SQLite (claim/sqlite) or
// PostgreSQL (claim/postgres). Its methods are operations, not statements:
// each is one transaction that persists what the Store decided in Go (the
// next state, the backoff, whether a job is dead), with the engine's own
// mechanisms for atomicity, durability and wake-ups. Times come in the
// parameters, from Store.Now; an engine never reads the clock for the
// domain.
//
// Errors wrap the sentinels of this package (ErrNoJob, ErrLost, ErrNotFound,
// ErrConflict, ErrReplaced) where the Store's contract names them. The
// conformance suite (claim's tests, run once per engine) is the definition
// of what each method must do.
type Engine interface {
	// Migrate brings the schema up to date; several processes may call it
	// at once on a new database.
	Migrate(ctx context.Context) error
	// Close releases the engine's connections and files.
	Close() error
	// Location is what the engine was opened on, without secrets.
	Location() string
	// Check returns an ErrReplaced error when the database the engine
	// opened is no longer the one at its location.
	Check() error

	// Claim takes the next runnable job (priority DESC, run_after, seq)
	// and records its run (NewRun), or returns ErrNoJob. A job of a queue
	// with as many jobs processing as its limit (SetQueueLimit, 0: none)
	// is not runnable; the count is read in the claim's own statement, so
	// that concurrent claims never both take a queue's last slot.
	Claim(ctx context.Context, p ClaimParams) (Job, Run, error)
	// CompleteAndClaim is Finish(done) then Claim(next) in one transaction.
	// It returns done's job's new state as Finish does, or "" when done was
	// no longer owned (ErrLost) and was dropped. ErrNoJob: nothing to
	// claim, done finished all the same.
	CompleteAndClaim(ctx context.Context, done FinishParams, next ClaimParams) (Job, Run, State, error)
	// Started records a run's process group and when its command started.
	Started(ctx context.Context, r Run, pgid int, at time.Time) error
	// Finish ends a run and moves its job as p says, keeping p.Run.Tails
	// with the run; ErrLost when the run is no longer the processing job's
	// current run of its worker.
	Finish(ctx context.Context, p FinishParams) (State, error)
	// HasWork: a job in queues is runnable at now, or failed and waiting.
	HasWork(ctx context.Context, queues []string, now time.Time) (bool, error)
	// NextRunAfter: the earliest run_after after now of a waiting job in
	// queues; zero when none.
	NextRunAfter(ctx context.Context, queues []string, now time.Time) (time.Time, error)

	// InFlight returns the current run of every processing job.
	InFlight(ctx context.Context) ([]InFlight, error)
	// Renew extends the worker's leases and heartbeat, in one durable
	// transaction; it reports the runs it renewed and whether the worker
	// was asked to stop. A worker whose row is gone is registered again
	// as p.Worker says (Renewal.Registered), in the same transaction.
	Renew(ctx context.Context, p RenewParams) (Renewal, error)
	// Recover ends a lost run as p says, keeping p.Tails with it; ErrLost
	// when it is not the current run of a processing job.
	Recover(ctx context.Context, p RecoverParams) (State, error)

	// Enqueue stores jobs in one transaction, durably.
	Enqueue(ctx context.Context, p EnqueueParams) ([]Result, error)
	// EnqueueStream stores every batch of batches (none of them Each) in one
	// transaction, as Enqueue would, handing each batch's results to each
	// before it pulls the next; an error from batches, each or a refusal
	// rolls everything back. A batch's rows and results are the engine's
	// and the caller's for that batch only: both may reuse their memory.
	EnqueueStream(ctx context.Context, batches iter.Seq2[EnqueueParams, error], each func([]Result) error) error

	// Get returns one job or ErrNotFound.
	Get(ctx context.Context, id string) (Job, error)
	// GetAll streams the jobs of ids that exist, in any order, from one
	// statement however many ids there are (wait reads 100,000 at a look).
	GetAll(ctx context.Context, ids []string) iter.Seq2[Job, error]
	// Jobs streams the jobs f selects, in its order (f is checked), one at
	// a time: memory stays flat at any size. It stops at the first error,
	// which it yields, or when the caller stops ranging.
	Jobs(ctx context.Context, f Filter) iter.Seq2[Job, error]
	// CountIDPrefix counts the jobs whose id starts with prefix (a
	// ValidID), up to limit: one range of the id index, read no further.
	CountIDPrefix(ctx context.Context, prefix string, limit int) (int, error)
	// QueueCounts returns the jobs per queue and state, without zeros.
	QueueCounts(ctx context.Context) (map[string]map[State]int, error)
	// Runs returns a job's runs, first attempt first; their Tails' Data
	// only when tails is true.
	Runs(ctx context.Context, jobID string, tails bool) ([]Run, error)
	// RunsPerMinute counts runs ended since, per minute and outcome.
	RunsPerMinute(ctx context.Context, since time.Time) ([]MinuteRuns, error)
	// EndedRuns returns up to limit runs ended after mark, in its order.
	EndedRuns(ctx context.Context, after RunMark, limit int) ([]Run, error)

	// Retry re-drives a dead job (RetryError, NotDeadError, ErrNotFound),
	// and re-arms the jobs its death made dead (DeadBy), down the chain:
	// pending again, still waiting for it. One whose unique_key a live job
	// holds stays dead, with the jobs below it.
	Retry(ctx context.Context, id string, now time.Time) (Job, Rearmed, error)
	// EndDependents makes dead the pending jobs waiting for each p.ID of
	// ps, which ended in p.State, with error p.ErrorFor(the job it waited
	// for), and those waiting for them, down the chain, all in one
	// transaction; it returns them, those of ps[0] first. ps may be
	// thousands long (cancel --queue), and most of its jobs have no
	// dependent.
	EndDependents(ctx context.Context, ps []EndDependentsParams) ([]Job, error)
	// EndedDependencies lists the dead or canceled jobs that pending jobs
	// still wait for: what a crash between a death and its EndDependents
	// left behind.
	EndedDependencies(ctx context.Context) ([]EndDependentsParams, error)
	// HookDone adds how a finish hook ended to the run it followed.
	HookDone(ctx context.Context, r Run, text string) error
	// RetryAll re-drives every dead job whose unique_key is free.
	RetryAll(ctx context.Context, now time.Time) ([]Job, error)
	// Purge deletes a dead job and its runs.
	Purge(ctx context.Context, id string) error
	// DropEnv drops the env of the completed and canceled jobs that
	// finished before cutoff, and returns how many it dropped.
	DropEnv(ctx context.Context, cutoff time.Time) (int64, error)
	// PurgeFinished deletes jobs in state finished before cutoff.
	PurgeFinished(ctx context.Context, state State, cutoff time.Time) ([]string, error)
	// HeldDead lists dead jobs whose unique_key a live job holds.
	HeldDead(ctx context.Context) ([]Job, error)
	// BlockedDead lists dead jobs that wait for a job removed, dead or
	// canceled, oldest first.
	BlockedDead(ctx context.Context) ([]Job, error)

	// RegisterWorker adds w (StartedAt and HeartbeatAt set) to the registry.
	RegisterWorker(ctx context.Context, w WorkerInfo) error
	// RemoveWorker deletes a worker from the registry.
	RemoveWorker(ctx context.Context, id string) error
	// Workers lists the registry, oldest first.
	Workers(ctx context.Context) ([]WorkerInfo, error)
	// RequestStop asks every worker to stop; it returns how many.
	RequestStop(ctx context.Context) (int, error)
	// StopRequested: worker id was asked to stop (false when unknown).
	StopRequested(ctx context.Context, id string) (bool, error)

	// ConfigValues returns the stored config, key to value.
	ConfigValues(ctx context.Context) (map[string]string, error)
	// SetConfig stores one canonical value, durably, if check (called in
	// the same transaction with the stored config) accepts it.
	SetConfig(ctx context.Context, key, value string, check func(stored map[string]string) error) error

	// SetQueueLimit stores a queue's limit on processing jobs (0: none),
	// durably, and wakes waiting workers.
	SetQueueLimit(ctx context.Context, queue string, maxRunning int, now time.Time) error
	// RemoveQueue deletes a queue's settings; false when it had none.
	RemoveQueue(ctx context.Context, queue string) (bool, error)
	// Queues lists the queues with settings by name, each with its jobs
	// processing now.
	Queues(ctx context.Context) ([]Queue, error)

	// Schedules lists every schedule by name, with its last job's state.
	Schedules(ctx context.Context) ([]Schedule, error)
	// Schedule returns one schedule, or ErrNotFound.
	Schedule(ctx context.Context, name string) (Schedule, error)
	// InsertSchedule adds a schedule; ErrConflict when the name is taken.
	InsertSchedule(ctx context.Context, sc Schedule) error
	// PutFileSchedule inserts or replaces a schedule defined by a file
	// (and leaves one added by command alone).
	PutFileSchedule(ctx context.Context, sc Schedule) error
	// DeleteSchedule removes a schedule; ErrNotFound when there is none.
	DeleteSchedule(ctx context.Context, name string) error
	// SetSchedulePaused pauses or resumes a schedule, due next at next.
	SetSchedulePaused(ctx context.Context, name string, paused bool, next, now time.Time) error
	// FireSchedule moves a schedule from p.Due to p.Next and enqueues
	// p.Job in one transaction; ok false when it was no longer due at p.Due.
	FireSchedule(ctx context.Context, p FireParams) (Result, bool, error)
	// CorrectScheduleDue moves an active, unchecked schedule's next due
	// time from from to to and marks it checked, only while its next due
	// time is from and its updated_at base; false when it is not.
	CorrectScheduleDue(ctx context.Context, name string, from, to, base time.Time) (bool, error)

	// Changes: see Store.Changes.
	Changes(ctx context.Context) (<-chan struct{}, error)
	// Health: see Store.Health.
	Health(ctx context.Context) (Health, error)
	// DueSince: see Store.DueSince; due is the Store's clock.
	DueSince(ctx context.Context, now time.Time) (map[string]time.Time, error)

	// Steering (cancel.go, restart.go, pause.go). A job marked by Cancel
	// while processing (CancelAt) must end canceled through every ending
	// of its run: Finish and Recover return Canceled for it, whatever state
	// they were asked for, and set its finished time.

	// Cancel cancels a pending or failed job at once, and marks a
	// processing one (CancelAt, the first request kept), returning the job
	// as the change left it; changed is false, with the job as it is, when
	// it was none of those (ErrNotFound when there is no such job).
	Cancel(ctx context.Context, p CancelParams) (j Job, changed bool, err error)
	// CancelQueue does what Cancel does to every such job of p.Queue.
	CancelQueue(ctx context.Context, p CancelParams) ([]Job, error)
	// CancelRequested lists the marked processing jobs of a worker.
	CancelRequested(ctx context.Context, workerID string) ([]RunID, error)
	// Restart makes finished jobs pending again (p.ID's, or every one in
	// p.State) as RestartParams says; for p.ID: the job as it is with
	// changed false when it is not finished, RestartHeldError when a live
	// job holds its unique_key. For p.State, jobs whose key is held stay.
	// What the restarted jobs' re-arming did comes back in r, as Retry's.
	Restart(ctx context.Context, p RestartParams) (jobs []Job, changed bool, r Rearmed, err error)
	// Remove deletes a finished job and its runs; it returns the job's
	// state when it is not finished ("" and ErrNotFound when there is none).
	Remove(ctx context.Context, id string) (State, error)
	// SetPaused pauses or resumes queue (AllQueues: every queue; resume of
	// AllQueues resumes them all) and reports whether every queue is
	// paused afterwards.
	SetPaused(ctx context.Context, queue string, paused bool, now time.Time) (allPaused bool, err error)
	// Paused lists the paused queues by name.
	Paused(ctx context.Context) ([]string, error)
	// SetHeld holds a pending or failed job (state held, the state it left
	// kept), or releases a held one (back to that state), returning the
	// job as the change left it; changed is false, with the job as it is,
	// when it was in no such state (ErrNotFound when there is no such job).
	SetHeld(ctx context.Context, p HoldParams) (j Job, changed bool, err error)
	// Edit writes p.Job's editable fields (command, priority, queue,
	// run_at, run_after, env, max_retries, label) to the job of its id if
	// it is pending or held and was last changed at p.Was, in one
	// statement; changed is false when it was not.
	Edit(ctx context.Context, p EditParams) (j Job, changed bool, err error)
	// PendingCounts counts the pending jobs of each queue that has some:
	// all of them, those whose run_after is after now, and those waiting
	// for others (and not after now).
	PendingCounts(ctx context.Context, now time.Time) ([]QueuePending, error)
	// ScaleWorkers sets the slots of every live worker that is not
	// stopping to n, and wakes them; it returns how many there were.
	ScaleWorkers(ctx context.Context, n int) (int, error)
	// WorkerSlots returns the slots of worker id in the registry
	// (ErrNotFound when it is not there).
	WorkerSlots(ctx context.Context, id string) (int, error)
	// ScaledTo sets worker id's slots_applied to n and wakes the store's
	// watchers; a worker not registered is no error.
	ScaledTo(ctx context.Context, id string, n int) error

	// Copying (copy.go).

	// Export calls fn with one consistent snapshot of the engine's tables,
	// valid until fn returns. It changes nothing.
	Export(ctx context.Context, fn func(Snapshot) error) error
	// Import copies p.Tables from p.From into the engine, rows as they
	// are, in one durable transaction that writers wait for, once p.Check
	// accepts what the tables hold; then it counts the copied jobs per
	// queue and state, and sets the jobs' seq to go on after the last one
	// copied. It returns the rows copied per table.
	Import(ctx context.Context, p ImportParams) (map[string]int64, error)
}

// ExistsError is the ErrConflict of an insert whose id is taken by j.
func ExistsError(j Job) error {
	return fmt.Errorf("%w: job %s exists already (state %s); pick another id or leave id out", ErrConflict, j.ID, j.State)
}

// InsertConflict is the error of an insert whose id is taken by j, a job
// that is not dead: ExistsError, or for a re-drive (a dead/ file dropped
// back) a *RedrivenError.
func InsertConflict(j Job, redrive bool) error {
	if redrive {
		return &RedrivenError{Job: j}
	}
	return ExistsError(j)
}

// RedrivenError is the ErrConflict of a dead/ file dropped back whose job
// is dead no more: it was re-driven already (by another copy of the file,
// dlq retry or restart). Another id is no fix: it would make a second job
// that runs the command again.
type RedrivenError struct{ Job Job }

func (e *RedrivenError) Error() string {
	return fmt.Sprintf("%v: job %s is %s, not dead: it was re-driven already (queuectl show %s)", ErrConflict, e.Job.ID, e.Job.State, e.Job.ID)
}

func (e *RedrivenError) Unwrap() error { return ErrConflict }

// KeyHolder is the live job (pending, processing, failed or held) that
// holds a unique_key, which a refused retry or restart names; ID is ""
// when it could not be found (it ended in the meantime).
type KeyHolder struct {
	Key, ID string
	State   State
}

// HeldKeyError is the ErrConflict of a retry of job id whose unique_key
// the live job h holds.
func HeldKeyError(id string, h KeyHolder) error { return heldKeyError(id, h, "retry") }

// heldKeyError says that job id cannot be re-driven (verb: retry,
// restart) while h holds its unique_key, and names h.
func heldKeyError(id string, h KeyHolder, verb string) error {
	if h.ID == "" {
		return fmt.Errorf("%w: job %s has the unique_key of a job still pending, processing or failed; %s it once that job is done", ErrConflict, id, verb)
	}
	return fmt.Errorf("%w: job %s has unique_key %q, which job %s (%s) holds; %s it once %s is done (queuectl wait %s)",
		ErrConflict, id, h.Key, h.ID, h.State, verb, h.ID, h.ID)
}

// NotDeadError explains why job id, in state, could not be acted on as a
// dead job; state "" means there is no such job.
func NotDeadError(id string, state State) error {
	if state == "" {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return fmt.Errorf("%w: job %s is %s, not dead", ErrConflict, id, state)
}

// NotFoundError is the ErrNotFound of job id.
func NotFoundError(id string) error { return fmt.Errorf("%w: %s", ErrNotFound, id) }

// An Opener opens an engine on a location it was registered for, with o.
type Opener func(ctx context.Context, location string, o OpenOptions) (Engine, error)

// OpenOptions are what a caller asks of an engine beside its location:
// kept apart from it, so that the location stays as its user wrote it in
// every message that names it.
type OpenOptions struct {
	// MaxConns is the size of a PostgreSQL engine's pool; 0 is the
	// engine's default. A URL's own pool_max_conns wins over it.
	MaxConns int
}

var (
	enginesMu sync.Mutex
	engines   = map[string]Opener{}
	readers   = map[string]Opener{}
)

// RegisterEngine makes an engine available to Open. Engines call it from
// their package's init; import them for that effect.
func RegisterEngine(name string, open Opener) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	engines[name] = open
}

// RegisterReader makes an engine's read-only open available to
// OpenReadOnly: an engine that changes nothing in the database, nor
// creates it, and refuses a schema that is not up to date.
func RegisterReader(name string, open Opener) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	readers[name] = open
}

func opener(name string) (Opener, error) { return lookup(engines, name) }

func lookup(registry map[string]Opener, name string) (Opener, error) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if open, ok := registry[name]; ok {
		return open, nil
	}
	return nil, fmt.Errorf("open database: this queuectl has no %s engine (import github.com/queuectl/queuectl/claim/%s)", name, name)
}

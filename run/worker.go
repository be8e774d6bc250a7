package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// ErrInterrupted is returned by Run after a hard stop put running jobs back
// to pending. main exits 130 for it.
var ErrInterrupted = errors.New("worker interrupted: running jobs stopped and put back to pending")

// Worker is one `worker start` process: Slots jobs at a time.
type Worker struct {
	Store *claim.Store
	// Config is the configuration when the worker starts; what of it its
	// runs use is read again at each heartbeat, through Reload (nil: Config
	// holds; settings.go).
	Config claim.Config
	Reload func(context.Context) (claim.Config, error)
	Slots  int
	Queues []string // empty: every queue
	LogDir string
	// Home is the queuectl home, given to every job as QUEUECTL_HOME so
	// that a job can enqueue into the queue it runs from.
	Home string
	// DB is the store as it was named (--db, $QUEUECTL_DB…: a path or a
	// URL with its password), given to every job as QUEUECTL_DB, for the
	// same reason: `run` stores none of its caller's, and a worker given
	// --db has none in its environment.
	DB string
	// Drain makes Run return once its slots are idle, the runs of dead
	// workers are recovered, and nothing in its queues is runnable or
	// waiting for a retry. A run of a live worker, or of another host's
	// whose lease holds, is not waited for.
	Drain bool
	// OnDead is called after a job dies (dead/ files); may be nil.
	OnDead func(ctx context.Context, j claim.Job)
	// SyncDead, when set, makes the home's dead/ agree with the store; the
	// worker calls it after changes to the store, at most once a
	// heartbeat interval (keepDead), for a store other hosts share.
	SyncDead func(ctx context.Context) error
	// PruneRemoved, set for a store other hosts share, makes the worker
	// remove the log directories of jobs removed from the store, which a
	// `rm` or `purge` on another host could not reach (keepRemovedLogs).
	// The home's logs/ is then the store's, as its dead/ is for SyncDead.
	PruneRemoved bool
	// Events receives what the worker does (run/event.go), diagnostics
	// included as EventWarning, from any of its goroutines; may be nil.
	Events func(Event)
	// Starts, when set, is called as each run starts, with the job and the
	// run as the slot claimed them, before Events gets the run's
	// EventStarted (Nudges.Start).
	Starts func(claim.Job, claim.Run)
	// Output, when set, gets each part of a run's output (stream 0 stdout,
	// 1 stderr) as it is written to the run's log file, just before, with
	// its offset there, in the goroutine that copies the stream: it must
	// not keep p, nor block (Nudges.Output).
	Output func(job string, run, stream int, off int64, p []byte)
	// Unrecorded, when set, is called once for a run whose end could not
	// be recorded for a full disk, with the run as it ended (its Tails,
	// ExitCode and Error) and the store's error: the run is recorded once
	// there is room, and whoever waits for it may know why it waits
	// (Nudges.Unrecorded).
	Unrecorded func(j claim.Job, r claim.Run, err error)
	// Log receives diagnostics when Events is nil; may be nil.
	Log func(format string, args ...any)

	id, host string
	live     atomic.Pointer[claim.Config] // the settings read last (settings); nil: Config
	pruneNow chan struct{}                // a retention changed: prune at once (reload)
	// info is the worker's registration, which a renewal puts back when
	// a reaper removed it (see heartbeat); stopping is set once soft ends.
	info     claim.WorkerInfo
	stopping atomic.Bool
	wake     wakeup
	failed   error // what stopped the worker on its own, if anything
	failOnce sync.Once
	// logsDown: a run could not keep its output in logs/; the slots claim
	// nothing until logsBack finds it writable again.
	logsDown atomic.Bool
	running  atomic.Int32 // jobs running in this worker's slots
	// faultRetry overrides faultRetry (tests).
	faultRetry time.Duration
	hooks      sync.WaitGroup
	steer      steering // the runs in the slots, to stop one whose job is canceled
	scale      *scaler  // how many slots claim (worker scale)
	pauses     pauseNotes
	reach      Reach // whether the store answers (outage.go)
	// fullStore, fullLogs: whether the store's disk, logs/'s, is full
	// (diskfull.go).
	fullStore, fullLogs fullness
	// claiming counts claims in flight, and claimed runs not yet in steer;
	// unsure is set when a claim failed in a way that may have committed
	// (the connection lost on COMMIT): the reaper then looks for a run of
	// this worker that no slot holds (reapUnseen).
	claiming atomic.Int32
	unsure   atomic.Bool
	reaping  sync.Mutex // held by a reaper pass (reapOnce)
	cgroups  *cgroups   // the slots' cgroups (cgroups_linux.go)
	// wakeUpsLost: the worker said the store's wake-ups are lost, and not
	// yet that they are back; wakeUpsSeen: when a renewal first found them
	// lost (sayWakeUps; the heartbeat's alone).
	wakeUpsLost bool
	wakeUpsSeen time.Time

	// hooksRunning counts the hook runs under way (fireHooks), for what
	// a stopping worker says it waits for.
	hooksRunning atomic.Int32
}

// Run registers the worker and runs jobs until soft is cancelled (or `worker
// stop` asks, or a drain ends), then lets running jobs finish and returns
// nil. If hard is cancelled too, running jobs are stopped (process group
// TERM, then KILL after stop-timeout), put back to pending, and Run returns
// ErrInterrupted. When the database file is deleted or replaced under it,
// or found corrupt, it stops gracefully too and returns that error
// (claim.Unusable). All goroutines Run starts end before it returns.
func (w *Worker) Run(soft, hard context.Context) error {
	if err := w.Config.Check(); err != nil {
		return fmt.Errorf("worker config: %w", err)
	}
	w.host = HostID()
	w.id = newWorkerID(HostName(w.host))
	keepInherited() // the process's: no job or hook gets them
	w.sayReach()
	w.fullStore.waits, w.fullLogs.waits = storeWaits, logsWaits
	w.cgroups = newCgroups(w.id, w.logf)
	defer w.cgroups.close()
	// The child subreaper of its jobs (children_linux.go): what a job
	// leaves behind comes back to this worker, to be stopped and reaped.
	defer becomeSubreaper()()
	defer w.reapLeftBehind()()
	ctx := context.WithoutCancel(hard)
	if err := w.register(ctx, hard); err != nil {
		return err
	}
	defer w.Store.RemoveWorker(ctx, w.id)
	w.emit(Event{Kind: EventStart, Worker: w.id, Slots: w.Slots, Queues: w.Queues})
	defer w.emit(Event{Kind: EventStop, Worker: w.id})
	defer w.reach.Flush() // a return not said yet is said before the stop

	soft, stop := context.WithCancel(soft)
	defer stop()
	w.scale = &scaler{w: w}
	bg, err := w.startBackground(ctx, soft, hard, stop)
	if err != nil {
		return err
	}
	defer bg.unwatch()
	hardStopped := w.runSlots(soft, hard, stop)
	stop()
	bg.wait()
	w.hooks.Wait() // each is bounded by hook-timeout, and ends with hard
	if w.failed != nil {
		return w.failed
	}
	if hardStopped {
		return ErrInterrupted
	}
	return nil
}

// register enters the worker in the store's registry, and ends the jobs a
// crashed worker left waiting for dead ones.
func (w *Worker) register(ctx, hard context.Context) error {
	// Lease and heartbeat interval as this worker keeps them until it
	// stops, by which other hosts judge whether it lives (Gone).
	// Its process's start tells it from another that takes its pid later.
	start, _ := processStart(os.Getpid())
	info := claim.WorkerInfo{ID: w.id, Host: w.host, PID: os.Getpid(), PIDStart: start, Slots: w.Slots, Queues: w.Queues,
		StartedAt: w.Store.Now().UTC(), Lease: w.Config.Lease, HeartbeatInterval: w.Config.HeartbeatInterval}
	if err := w.Store.RegisterWorker(ctx, info); err != nil {
		return err
	}
	w.info = info
	// A worker that crashed between a job's death and the end of the jobs
	// waiting for it left them waiting for ever: end them now.
	ended, err := w.Store.EndLeftDependents(ctx)
	if err != nil {
		w.logf("end jobs waiting for dead ones: %v", err)
	}
	w.diedOfDependency(ctx, hard, ended)
	return nil
}

// runSlots runs the slots (as many as w.scale says) until soft ends and
// each has finished its job. It reports whether a hard stop interrupted a
// job.
func (w *Worker) runSlots(soft, hard context.Context, stop context.CancelFunc) (hardStopped bool) {
	var slots sync.WaitGroup
	var interrupted sync.Once
	slots.Add(1)
	go w.scale.run(soft, w.Slots, &slots, func(i int) {
		defer slots.Done()
		if w.slot(soft, hard, stop, i) {
			interrupted.Do(func() { hardStopped = true })
		}
	})
	slots.Wait()
	return hardStopped
}

// slot i claims and runs jobs one at a time until soft ends, while i is
// below the worker's slot count (scale.go). It reports
// whether a hard stop interrupted a job.
func (w *Worker) slot(soft, hard context.Context, stop context.CancelFunc, i int) (interrupted bool) {
	c := claim.Claimant{WorkerID: w.id, Host: w.host, PID: os.Getpid(), Queues: w.Queues,
		Lease: w.Config.Lease, LogDir: w.LogDir}
	var woken chan struct{}
	defer func() { w.wake.withdraw(woken) }()
	cg := w.cgroups.slot(i)
	defer cg.close()
	for soft.Err() == nil {
		w.wake.withdraw(woken)
		if w.logsDown.Load() && !w.logsBack(soft) {
			continue
		}
		unpark := w.scale.unparked()
		if !w.scale.take(i) { // scaled down: claim nothing until fewer jobs than the count run
			w.idle(soft, unpark)
			continue
		}
		woken = w.wake.wait()
		w.claiming.Add(1)
		asked, began := w.Store.Now(), time.Now() // the claim's lease runs from no earlier
		j, r, err := w.Store.Claim(soft, c)
		if err != nil {
			w.scale.put()
		}
		if err == nil || errors.Is(err, claim.ErrNoJob) {
			w.storeUp()
		}
		if err == nil {
			w.diskRoom()
		}
		if err != nil {
			w.claimFailed(err)
		}
		if errors.Is(err, claim.ErrNoJob) || (err != nil && soft.Err() != nil) {
			if w.Drain && w.drained(soft, hard) {
				stop()
				return false
			}
			w.idle(soft, woken)
			continue
		}
		if claim.Unusable(err) {
			w.fail(err, stop)
			return interrupted
		}
		if w.storeDown(err) {
			// Claim nothing until the store is back; the heartbeat and the
			// reaper find out when it is.
			w.awaitStore(soft, storeRetry)
			continue
		}
		if err != nil {
			if !w.diskFull(err) { // said once for the spell
				w.logf("claim: %v", err)
			}
			w.idle(soft, woken)
			continue
		}
		// Another job may be runnable too (a burst came with one wake-up):
		// the next idle slot looks.
		w.wake.withdraw(woken)
		w.wake.fire()
		w.running.Add(1)
		for next := (&claimed{j, r, leaseEnd(asked, began, r, c.Lease)}); next != nil; {
			var stopped bool
			stopped, next = w.runOne(soft, hard, c, next, cg, i)
			interrupted = interrupted || stopped
		}
		w.running.Add(-1)
		w.scale.put()
	}
	return interrupted
}

// claimFailed notes a claim that returned err instead of a run: no run to
// hold, and, unless the store answered that there is none, perhaps one
// committed unseen.
func (w *Worker) claimFailed(err error) {
	if !errors.Is(err, claim.ErrNoJob) {
		w.unsure.Store(true)
	}
	w.claiming.Add(-1)
}

// claimed is a job a slot holds, with the run it claimed it as, and when
// the claim's lease ends by this worker's clock (no later than the
// store's: measured from before the claim was sent).
type claimed struct {
	job        claim.Job
	run        claim.Run
	leaseUntil time.Time
}

// leaseEnd is when the lease of run r ends by this worker's clock, for a
// claim sent at began (time.Now) and asked (the store's clock, just
// before it): lease from then, and earlier by as much as the store dated
// the claim before asked. A claim that went in a group with earlier ones
// (PostgreSQL's, batch.go) is dated, and its lease in the store counted,
// from the group's first; the worker's copy must not end later.
func leaseEnd(asked, began time.Time, r claim.Run, lease time.Duration) time.Time {
	return began.Add(lease - max(0, asked.Sub(r.StartedAt)))
}

// idle waits for a wake-up, the poll interval, or the end of soft.
func (w *Worker) idle(soft context.Context, woken <-chan struct{}) {
	t := time.NewTimer(w.Config.PollInterval)
	defer t.Stop()
	select {
	case <-woken:
	case <-t.C:
	case <-soft.Done():
	}
}

// drained reports whether a draining worker may stop: none of its slots is
// running a job (a failure could bring it back for a retry), a reaper pass
// has recovered the runs of dead workers (a crash before a nightly drain
// must not leave their jobs processing for ever), and nothing in its queues
// is runnable or waiting for a retry, recovered jobs included.
func (w *Worker) drained(ctx, hard context.Context) bool {
	if w.running.Load() > 0 || !w.reapOnce(ctx, hard) {
		return false
	}
	more, err := w.Store.HasWork(ctx, w.Queues)
	return err == nil && !more
}

// runOne runs a claimed job and records how it ended. Bookkeeping outlives
// the contexts, with a bound, so that a shutdown never strands a job in
// processing. It reports whether a hard stop interrupted the job. When the
// job completed, soft still runs and slot i may go on claiming (it was not
// scaled down), the slot's next job is claimed in the same transaction and
// returned.
func (w *Worker) runOne(soft, hard context.Context, c claim.Claimant, held *claimed, cg *slotCgroup, i int) (bool, *claimed) {
	j, r := held.job, held.run
	// A claim whose answer came late (it waited on a lock, a stalled
	// server, a queue of writes) may hold less of its lease than a renewal
	// needs to move it on, or none: another host may take the run for lost
	// at any moment, and start the job too. It does not start here: the
	// job goes back, the attempt not counted.
	if left := time.Until(held.leaseUntil); left < w.Config.HeartbeatInterval {
		w.claiming.Add(-1)
		w.lateClaim(hard, j, r, left)
		return false, nil
	}
	// The job does not start where its output could not be kept: that is
	// the environment's fault, not the job's. It is checked before the
	// run is said to start, as it never does.
	if err := prepareLogDir(filepath.Dir(r.StdoutPath)); err != nil {
		w.logsDown.Store(true) // the slots claim nothing more until logs/ is back (logsBack)
		w.claiming.Add(-1)
		w.fullLogs.full(w, err)
		w.postpone(hard, j, r, err.Error())
		return false, nil
	}
	if w.Starts != nil {
		w.Starts(j, r)
	}
	w.emit(Event{Kind: EventStarted, Job: j.ID, Run: r.Attempt, Attempt: j.Attempts, MaxRetries: j.MaxRetries})
	// The run's own context: hard, or its job's cancel (errCanceled). It is
	// registered until the run's end is recorded, so a cancel that comes
	// meanwhile is seen (the run then ends canceled either way).
	run, stopRun := context.WithCancelCause(hard)
	defer stopRun(nil)
	id := claim.RunID{JobID: j.ID, Attempt: r.Attempt}
	w.steer.add(id, stopRun, held.leaseUntil)
	w.claiming.Add(-1) // held: the reaper sees it in steer
	defer w.steer.remove(id)
	began := time.Now()
	res := w.execute(run, j, r, cg)
	w.steer.ended(id)
	res.took = time.Since(began)
	if !res.over.IsZero() { // not the store's writes after it
		res.took = res.over.Sub(began)
	}
	r.Tails = res.tails // every end of the run keeps them (claim.Store)
	// and its start, where it was not recorded yet (startRecordDelay)
	r.PGID, r.ExecAt, r.Confined = res.pgid, res.execAt, res.confinedBy
	r.EndedAt = res.endedAt // the end is dated by it, not by its write
	r.Error = res.outputLost
	if res.lost {
		if errors.Is(context.Cause(run), errUnassigned) {
			// Not ours to give back: the job is pending again, or another
			// worker's, and it runs again without counting this run.
			w.logf("job %s: run %d %s (a crash of the server took its claim back, or another worker recovered it); it runs again, not counted as an attempt", j.ID, r.Attempt, res.err)
			return false, nil
		}
		w.logf("job %s: run %d %s; it is recovered as a lost run, not a failed attempt", j.ID, r.Attempt, res.err)
		if errors.Is(context.Cause(run), errLeaseLapsed) {
			w.giveBack(hard, r)
		}
		return false, nil
	}
	if res.fault != "" {
		w.postpone(hard, j, r, res.fault)
		return false, nil
	}
	if res.err == "" && !res.interrupted && soft.Err() == nil && w.scale.keep(i) {
		if next, ok := w.completeAndClaim(hard, c, j, r, res); ok {
			return false, next
		}
	}
	err := w.record(hard, j, r, res)
	if errors.Is(err, claim.ErrLost) {
		w.emit(Event{Kind: EventDropped, Job: j.ID, Run: r.Attempt})
	} else if err != nil {
		w.logf("job %s: %v", j.ID, err)
	}
	return res.interrupted, nil
}

// completeAndClaim records a completed run and claims the slot's next job
// in one transaction: one write per job for a busy slot, where Complete and
// then Claim would be two. ok is false when the store failed and nothing
// was recorded; the caller then records the run on its own.
func (w *Worker) completeAndClaim(hard context.Context, c claim.Claimant, j claim.Job, r claim.Run, res result) (next *claimed, ok bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(hard), 30*time.Second)
	defer cancel()
	w.claiming.Add(1)
	asked, began := w.Store.Now(), time.Now()
	nj, nr, ended, err := w.Store.CompleteAndClaim(ctx, r, c)
	if err != nil {
		w.claimFailed(err)
	}
	if err != nil && !errors.Is(err, claim.ErrNoJob) {
		return nil, false
	}
	if ended == "" {
		w.emit(Event{Kind: EventDropped, Job: j.ID, Run: r.Attempt})
	} else {
		w.succeeded(ctx, hard, j, r, res, ended)
	}
	if err != nil {
		return nil, true
	}
	return &claimed{nj, nr, leaseEnd(asked, began, nr, c.Lease)}, true
}

// record stores how a run ended. A store that fails (a full disk, say) is
// tried again until it works, the run turns out lost, or a hard stop: a
// result given up while this worker lives would leave the job processing,
// under a lease the worker keeps renewing, for as long as it runs. After a
// hard stop the job stays processing and is recovered once this worker is
// gone.
func (w *Worker) record(hard context.Context, j claim.Job, r claim.Run, res result) error {
	told := false
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		err := w.recordOnce(hard, j, r, res)
		if err == nil || errors.Is(err, claim.ErrLost) {
			w.storeUp()
			w.diskRoom()
		}
		if err == nil || errors.Is(err, claim.ErrLost) || claim.Unusable(err) || hard.Err() != nil {
			return err
		}
		if w.storeDown(err) {
			w.awaitStore(hard, wait) // said once for the outage; tried again once it is back
			continue
		}
		if w.diskFull(err) { // said once for the spell
			if !told && w.Unrecorded != nil {
				told = true
				ended := r
				ended.ExitCode, ended.Error = res.exitCode, res.err
				w.Unrecorded(j, ended, err)
			}
		} else {
			w.logf("job %s: record the end of run %d: %v; trying again in %v", j.ID, r.Attempt, err, wait)
		}
		select {
		case <-hard.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// recordOnce stores how a run ended, once, and acts on it. The store
// outlives the contexts, with a bound, so that a shutdown never strands a
// job in processing.
func (w *Worker) recordOnce(hard context.Context, j claim.Job, r claim.Run, res result) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(hard), 30*time.Second)
	defer cancel()
	next, err := w.finish(ctx, j, r, res)
	if errors.Is(err, claim.ErrLost) {
		// A finish whose answer was lost (a connection cut at COMMIT) may
		// have gone through: its retry finds the run ended, as this
		// worker ended it, and what the end calls for is still to do.
		switch was, ok, lookErr := w.endedAsTold(ctx, r, res); {
		case lookErr != nil:
			return lookErr // tried again, as the finish would be
		case ok:
			next, err = was, nil
		}
	}
	if err != nil {
		return err
	}
	w.afterEnd(ctx, hard, j, r, res, next)
	return nil
}

// finish records how run r ended, and returns the state it left the job in.
func (w *Worker) finish(ctx context.Context, j claim.Job, r claim.Run, res result) (claim.State, error) {
	switch res.outcome() {
	case claim.OutcomeCanceled:
		return claim.Canceled, w.Store.EndCanceled(ctx, r, res.exitCode)
	case claim.OutcomeInterrupted:
		return claim.Pending, w.Store.Release(ctx, r, res.err)
	case claim.OutcomeCompleted:
		return w.Store.Complete(ctx, r)
	}
	errText := res.err
	if res.outputLost != "" {
		errText += "; " + res.outputLost
	}
	if res.final {
		return w.Store.FailForGood(ctx, r, res.exitCode, errText)
	}
	return w.Store.Fail(ctx, j, r, res.exitCode, errText, w.settings().MaxBackoff)
}

// outcome is the outcome finish records for res: what finish, endedAsTold
// and afterEnd go by.
func (res result) outcome() string {
	switch {
	case res.canceled:
		return claim.OutcomeCanceled
	case res.interrupted:
		return claim.OutcomeInterrupted
	case res.err == "":
		return claim.OutcomeCompleted
	}
	return claim.OutcomeFailed
}

// endedAsTold reports whether run r is recorded ended as res ends it, by
// this worker, with no run of its job after it and nothing done to the job
// since; and then the state that end left the job in. Nobody else ends a
// run so: one taken from this worker ends lost, by whoever took it. An
// error is the store's, while it looked: not known yet.
func (w *Worker) endedAsTold(ctx context.Context, r claim.Run, res result) (claim.State, bool, error) {
	runs, err := w.Store.Runs(ctx, r.JobID)
	if err != nil || len(runs) == 0 {
		return "", false, err
	}
	last := runs[len(runs)-1]
	if last.Attempt != r.Attempt || !last.StartedAt.Equal(r.StartedAt) || last.WorkerID != w.id ||
		last.EndedAt.IsZero() || last.Outcome != res.outcome() {
		return "", false, nil
	}
	if res.outcome() == claim.OutcomeFailed && !sameCode(last.ExitCode, res.exitCode) {
		return "", false, nil
	}
	j, err := w.Store.Get(ctx, r.JobID)
	if errors.Is(err, claim.ErrNotFound) { // removed since
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	// The end dates the job's change with its run's: a job changed since
	// (`dlq retry`, `restart`, `cancel` of a failed one) no longer shows
	// the state the end left, and what that end called for is not known.
	if !j.UpdatedAt.Equal(last.EndedAt) {
		w.logf("job %s: run %d ended as recorded, but its job was changed since; its end is not acted on", r.JobID, r.Attempt)
		return "", false, nil
	}
	return j.State, true, nil
}

// sameCode reports whether two exit codes (nil: none) are the same.
func sameCode(a, b *int) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// afterEnd says how run r ended, in state next, and does what that calls
// for: hooks, the dead/ file, the jobs waiting for it.
func (w *Worker) afterEnd(ctx, hard context.Context, j claim.Job, r claim.Run, res result, next claim.State) {
	switch res.outcome() {
	case claim.OutcomeCanceled:
		w.emit(Event{Kind: EventCanceled, Job: j.ID, Run: r.Attempt, ExitCode: res.exitCode, Duration: res.took})
		w.endDependents(ctx, hard, j.ID, claim.Canceled)
		return
	case claim.OutcomeInterrupted:
		w.emit(Event{Kind: EventInterrupted, Job: j.ID, Run: r.Attempt})
		return
	case claim.OutcomeCompleted:
		w.succeeded(ctx, hard, j, r, res, next)
		return
	}
	if next == claim.Canceled { // a cancel came while it failed
		w.emit(Event{Kind: EventCanceled, Job: j.ID, Run: r.Attempt, ExitCode: res.exitCode, Duration: res.took})
		w.endDependents(ctx, hard, j.ID, next)
		return
	}
	w.ended(j, r, res, next)
	if next == claim.Dead {
		w.dead(ctx, j.ID)
	}
	w.fireHooks(hard, hookEvent{job: j, run: r, state: next, exitCode: res.exitCode, err: res.err},
		w.hooksFor(j, next, true))
	if next == claim.Dead {
		w.endDependents(ctx, hard, j.ID, next)
	}
}

func newWorkerID(host string) string {
	var b [3]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// reapInterval is how often every worker looks for lost runs. A run whose
// worker died on this host is recovered within one interval, well inside
// the 5 s that SPEC §6 promises.
const reapInterval = time.Second

// reap recovers runs lost to crashed workers until ctx ends: at once when
// the owning worker process on this host is gone, and on any host once the
// lease has lapsed. It kills what is left of a lost run's process group
// before making the job runnable, so that no orphan keeps writing while the
// job runs again. hard ends the hooks of jobs that died of lost runs.
func (w *Worker) reap(ctx, hard context.Context) {
	t := time.NewTicker(reapInterval)
	defer t.Stop()
	for {
		w.reapOnce(ctx, hard)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// reapBound bounds a reaper pass once it has begun to kill: the kills are
// waited for (killWait), then each recovery is stored.
const reapBound = killWait + 30*time.Second

// reapOnce recovers the runs that are lost now, once. ctx ends the look
// for them, not a pass that found some: once it kills, a pass stores the
// recoveries even if the worker stops meanwhile (a signal, a drain that
// ended), or the killed runs would stay processing until another reaper
// came, and the stop would read as a store error. It reports whether it
// could look and recovered every lost run it found: a draining worker ends
// only after such a pass. Passes (the reaper's, draining slots') take
// turns.
func (w *Worker) reapOnce(ctx, hard context.Context) bool {
	w.reaping.Lock()
	defer w.reaping.Unlock()
	unseen := w.unsure.CompareAndSwap(true, false)
	runs, err := w.Store.InFlight(ctx)
	if err != nil {
		if unseen {
			w.unsure.Store(true)
		}
		// An unusable store is said once, by the loop it stops.
		if ctx.Err() == nil && !w.storeDown(err) && !w.diskFull(err) && !claim.Unusable(err) {
			w.logf("reaper: %v", err)
		}
		return false
	}
	w.storeRead()
	unseen = unseen && w.reapUnseen()
	now := w.Store.Now()
	workers := registryOf(ctx, w.Store)
	var lost []claim.InFlight
	for _, f := range runs {
		if w.lost(f, now, unseen, workers) {
			lost = append(lost, f)
		}
	}
	ok := true
	if len(lost) > 0 {
		pass, cancel := context.WithTimeout(context.WithoutCancel(ctx), reapBound)
		defer cancel()
		if stopLost(pass, w.Store, w.host, lost) {
			// A worker of this host died: its slots' cgroups go too.
			w.cgroups.sweep()
		}
		for _, f := range lost {
			next, err := recoverLost(pass, w.Store, w.host, f)
			switch {
			case errors.Is(err, claim.ErrLost):
				// Another reaper, or the worker itself, got there first.
			case err != nil:
				ok = false
				if !w.storeDown(err) && !w.diskFull(err) {
					w.logf("reaper: %v", err)
				}
			default:
				w.recovered(pass, hard, f, next)
			}
		}
	}
	if ok {
		// Not before each lost run is recovered: a registry row is what
		// tells its worker's process from another that took its pid.
		w.reapWorkers(ctx, now, workers)
	}
	return ok
}

// stopLost kills what is left of the lost runs of host's workers (of
// another host's, nothing can be reached from here): each run's process
// group, and what left it carrying the run's mark. Every group is killed
// first and then waited for together: a dead worker's runs are recovered
// in one wait, however many it held. It reports whether it killed a group.
func stopLost(ctx context.Context, s *claim.Store, host string, lost []claim.InFlight) bool {
	var groups []int
	for _, f := range lost {
		if f.Host != host {
			continue
		}
		mark := runMark(f.WorkerID, f.JobID, f.Attempt)
		if pgid := lostGroup(ctx, s, f); pgid > 0 && ownGroup(pgid, mark, f.StartedAt) {
			syscall.Kill(-pgid, syscall.SIGKILL)
			groups = append(groups, pgid)
		}
		// What left the group (a setsid daemon) went to init when its
		// worker died; its QUEUECTL_RUN mark still names the run.
		for _, pid := range leftovers(0, mark, false, true) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	waitGone(groups, killWait)
	return len(groups) > 0
}

// recoverLost makes the job of a lost run, stopped by stopLost, runnable
// again (claim.Store.Recover) and returns its new state. A run of host
// left its files here, and nothing writes them any more: their ends are
// kept as a finished run's are. A run of another host keeps none; its
// files are there.
func recoverLost(ctx context.Context, s *claim.Store, host string, f claim.InFlight) (claim.State, error) {
	if f.Host == host {
		f.Tails = readTails(f.Run)
	}
	return s.Recover(ctx, f)
}

// RecoverGone recovers, as a worker's reaper does, the runs in flight of
// the jobs ids whose workers are gone (of this host: their process; of
// another: their lease, with the grace for its clock): what is left of
// each run's processes on this host is killed first (SPEC §6), then its
// job is made runnable again, or canceled where `cancel` marked it. It
// returns the new state of each job whose run it recovered; a run of a
// live worker, or one another reaper recovered first, is left out. A
// cancel uses it so that stopping a job whose worker was killed waits for
// no worker to start. The cgroups a dead worker's slots left are not its
// to see: the next worker of that cgroup sweeps them.
func RecoverGone(ctx context.Context, s *claim.Store, ids []string) (map[string]claim.State, error) {
	runs, err := s.InFlight(ctx)
	if err != nil {
		return nil, err
	}
	host, now := HostID(), s.Now()
	workers := registryOf(ctx, s)
	var lost []claim.InFlight
	for _, f := range runs {
		if slices.Contains(ids, f.JobID) && runGone(f, host, now, workers) {
			lost = append(lost, f)
		}
	}
	stopLost(ctx, s, host, lost)
	states := map[string]claim.State{}
	for _, f := range lost {
		next, err := recoverLost(ctx, s, host, f)
		if errors.Is(err, claim.ErrLost) {
			continue
		}
		if err != nil {
			return states, err
		}
		states[f.JobID] = next
	}
	return states, nil
}

// recovered says how a lost run's job ended up, and does what its new
// state asks (dead/ file, hooks, dependents).
func (w *Worker) recovered(ctx, hard context.Context, f claim.InFlight, next claim.State) {
	switch {
	case next == claim.Dead:
		w.emit(Event{Kind: EventDead, Job: f.JobID, Run: f.Attempt, Err: fmt.Sprintf("worker lost %d times", claim.MaxLost)})
		w.dead(ctx, f.JobID)
		w.lostDead(ctx, hard, f)
	case next == claim.Canceled: // its worker died stopping it for a cancel
		w.emit(Event{Kind: EventCanceled, Job: f.JobID, Run: f.Attempt, Err: "worker lost"})
		w.endDependents(ctx, hard, f.JobID, next)
	default:
		w.emit(Event{Kind: EventLost, Job: f.JobID, Run: f.Attempt, Worker: f.WorkerID, PID: f.PID, Host: f.Host})
	}
}

// lost reports whether a run in flight is lost: its worker is gone
// (runGone), or it is this worker's and, unseen, no slot holds it. A run
// of this worker whose command ended, its slot still recording the end, is
// not, whatever its lease: its command may have ended inside its lease
// while the store hung, and taken back here, it ran again.
func (w *Worker) lost(f claim.InFlight, now time.Time, unseen bool, workers registry) bool {
	if f.WorkerID == w.id {
		id := claim.RunID{JobID: f.JobID, Attempt: f.Attempt}
		switch {
		case w.steer.recording(id):
			return false
		case unseen && !w.steer.holds(id):
			return true
		case now.Before(f.LeaseUntil):
			return false
		}
	}
	return runGone(f, w.host, now, workers)
}

// registry is the store's registry of workers by id, as a reaper pass
// read it; nil when it could not be read.
type registry map[string]claim.WorkerInfo

// registryOf reads s's registry of workers; nil when it cannot (each run
// is then judged by its worker's pid alone).
func registryOf(ctx context.Context, s *claim.Store) registry {
	all, err := s.Workers(ctx)
	if err != nil {
		return nil
	}
	out := make(registry, len(all))
	for _, o := range all {
		out[o.ID] = o
	}
	return out
}

// runGone reports whether the worker of a run in flight is gone, seen from
// host: on this host, its process is gone (workers: the registry, which
// says when that process started, so that another process that came by its
// pid since is not taken for it); on any, its lease has lapsed (on another
// host's clock, with a grace).
func runGone(f claim.InFlight, host string, now time.Time, workers registry) bool {
	var start uint64
	if o, ok := workers[f.WorkerID]; ok && o.PID == f.PID {
		start = o.PIDStart
	}
	localGone := f.Host == host && !sameProcess(f.PID, start)
	expires := f.LeaseUntil
	if f.Host != host {
		expires = expires.Add(OtherHostGrace)
	}
	return localGone || !now.Before(expires)
}

// reapUnseen reports whether this pass may take for lost a run of this
// worker that no slot holds: one claimed by a claim whose COMMIT reached the
// store but whose answer did not. Nothing else would ever end it, as the
// heartbeat renews its lease. The runs were listed after a claim failed
// so; if no claim is in flight now, every run claimed before the listing
// is held by its slot, or ended (Recover then finds it moved on: ErrLost),
// or was never seen. Otherwise the next pass looks again.
func (w *Worker) reapUnseen() bool {
	if w.claiming.Load() != 0 {
		w.unsure.Store(true)
		return false
	}
	return true
}

// lostDead fires the on_dead hook of a job that died of lost runs (hard
// ends it).
func (w *Worker) lostDead(ctx, hard context.Context, f claim.InFlight) {
	j, err := w.Store.Get(ctx, f.JobID)
	if err != nil {
		return
	}
	w.fireHooks(hard, hookEvent{job: j, run: f.Run, state: claim.Dead, err: j.LastError}, w.hooksFor(j, claim.Dead, false))
	w.endDependents(ctx, hard, j.ID, claim.Dead)
}

// killWait bounds how long a reaper waits for killed runs' processes to be
// gone.
const killWait = 5 * time.Second

// lostGroup returns the process group of a lost run, 0 if none was
// recorded: the job's shell never started.
func lostGroup(ctx context.Context, s *claim.Store, f claim.InFlight) int {
	pgid := f.PGID
	// f may have been listed before its group was recorded; its worker is
	// gone now, so the record is final.
	if runs, err := s.Runs(ctx, f.JobID); err == nil {
		for _, r := range runs {
			if r.Attempt == f.Attempt {
				pgid = r.PGID
			}
		}
	}
	return pgid
}

// waitGone waits, at most limit, until no process of the killed groups is
// left: a killed process keeps its files and locks until it has exited,
// and the job's next run may need them (flock -n, say).
func waitGone(pgids []int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for len(pgids) > 0 && time.Now().Before(deadline) {
		var left []int
		for _, g := range pgids {
			if syscall.Kill(-g, 0) == nil {
				left = append(left, g)
			}
		}
		if len(left) > 0 {
			// Members may be zombies no one reaps; only /proc tells.
			live := liveGroups(left)
			left = left[:0]
			for g := range live {
				left = append(left, g)
			}
		}
		if pgids = left; len(pgids) > 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// reapWorkers removes registry rows of workers that are gone, so that status
// and `worker stop --wait` see only live ones.
func (w *Worker) reapWorkers(ctx context.Context, now time.Time, workers registry) {
	for _, o := range workers {
		if o.ID == w.id {
			continue
		}
		if Gone(o, w.host, now, w.Config.Lease) {
			w.Store.RemoveWorker(ctx, o.ID)
		}
	}
}

// Gone reports whether a registered worker is no longer running: its process
// is gone from this host (host: a HostID), or it has not renewed its
// heartbeat for its lease (and the grace for another host's clock), counted
// from its server's start when that came later (claim.WorkerInfo.Silence). The
// lease is the one the worker registered, which it keeps until it stops
// whatever config says now; lease, the caller's, only for a row of an
// older queuectl that recorded none.
func Gone(o claim.WorkerInfo, host string, now time.Time, lease time.Duration) bool {
	if o.Host == host {
		return !sameProcess(o.PID, o.PIDStart)
	}
	return o.Silence(now) > o.LeaseOr(lease)+OtherHostGrace
}

// BusySlots counts the jobs in s that are processing in one of the live
// workers: a job of a crashed worker stays processing until it is
// recovered, but no slot runs it.
func BusySlots(ctx context.Context, s *claim.Store, live []claim.WorkerInfo) (int, error) {
	jobs, err := s.List(ctx, claim.Filter{State: claim.Processing})
	if err != nil {
		return 0, err
	}
	ids := map[string]bool{}
	for _, w := range live {
		ids[w.ID] = true
	}
	n := 0
	for _, j := range jobs {
		if ids[j.WorkerID] {
			n++
		}
	}
	return n, nil
}

// WaitExited waits until the processes pids of this host have exited, or
// ctx ends, looking every 20 ms: a worker that removed itself from the
// store may still be closing it. A pid that a new process took meanwhile
// is told apart by its start, where /proc says it.
func WaitExited(ctx context.Context, pids []int) error {
	starts := map[int]uint64{}
	for _, pid := range pids {
		if start, ok := processStart(pid); ok {
			starts[pid] = start
		}
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for len(starts) > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		for pid, start := range starts {
			if now, ok := processStart(pid); !ok || now != start {
				delete(starts, pid)
			}
		}
	}
	return nil
}

// alive reports whether a process exists. A recycled pid reads as alive:
// sameProcess tells it from the one that had it.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// sameProcess reports whether the process that started at start (clock
// ticks after boot, processStart's) as pid still lives. Process ids come
// round again (pid_max is 32768 on many hosts): a process holding pid that
// started at another time is another one, and the first is gone. Where
// the start is not known (0: a worker of an older queuectl) or cannot be
// read (no /proc, or one that hides other users' processes), the pid
// alone says, as a zombie does: never a live worker taken for gone.
func sameProcess(pid int, start uint64) bool {
	if now, ok := processStart(pid); ok && start != 0 && now != 0 {
		return now == start
	}
	return alive(pid)
}

// Orphan is a run of a worker of this host that is gone, whose processes
// still live.
type Orphan struct {
	claim.InFlight
	PIDs []int // its processes: of its process group, and those its QUEUECTL_RUN mark names
}

// Orphans returns the runs in flight in s of this host's workers that are
// gone, whose processes (by process group, or QUEUECTL_RUN mark) still
// live: what a worker's reaper stops before their jobs run again. Nothing
// else would stop them once the store no longer names them (db restore).
func Orphans(ctx context.Context, s *claim.Store) ([]Orphan, error) {
	runs, err := s.InFlight(ctx)
	if err != nil {
		return nil, err
	}
	host, workers := HostID(), registryOf(ctx, s)
	var out []Orphan
	for _, f := range runs {
		// By its process, not its lease (now: the zero time).
		if f.Host != host || !runGone(f, host, time.Time{}, workers) {
			continue
		}
		mark := runMark(f.WorkerID, f.JobID, f.Attempt)
		pgid := f.PGID
		if pgid > 0 && !ownGroup(pgid, mark, f.StartedAt) {
			pgid = 0
		}
		if pids := leftovers(pgid, mark, false, true); len(pids) > 0 {
			out = append(out, Orphan{InFlight: f, PIDs: pids})
		}
	}
	return out, nil
}

package claim

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Schedule is a recurring job: at each due time of its cron expression a
// worker enqueues one job made from its spec, with unique_key
// "schedule:NAME", so a run still pending, running or retrying makes the
// next due time a skip, not a second run.
type Schedule struct {
	Name    string
	Cron    string
	TZ      string // "" is the worker's local time zone
	Spec    string // the job spec (JSON) each run is made from
	Paused  bool
	File    bool // defined by schedules/NAME.json, not by `schedule add`
	NextDue time.Time
	// LastJob is the id of the job the last due time made (or found
	// holding the key), with its state now; empty when none.
	LastJob   string
	LastState State
	LastDue   time.Time
	// LastSkipped is the last due time that made no job of its own, and
	// SkipReason why (SkipOverlap, SkipMissed or SkipRefused); zero and
	// "" when none has.
	LastSkipped time.Time
	SkipReason  string
	// DueChecked: NextDue was computed by a worker of this release, by its
	// reading of cron and in the time zone it fires in. Until then a
	// worker recomputes it from UpdatedAt (see FireDue).
	DueChecked bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Why a due time made no job of its own (Schedule.SkipReason).
const (
	// SkipOverlap: the job of an earlier due time still held the key
	// schedule:NAME (pending, running or retrying).
	SkipOverlap = "overlap"
	// SkipMissed: no worker fired the schedule at the due time; when one
	// did, it made one job for all the due times missed.
	SkipMissed = "missed"
	// SkipRefused: the schedule's job spec made no job (the worker's log
	// says why).
	SkipRefused = "refused"
)

// ScheduleKey is the unique_key of the jobs schedule name makes.
func ScheduleKey(name string) string { return "schedule:" + name }

// Fired is what one due time of a schedule became.
type Fired struct {
	Schedule string
	Due      time.Time
	Job      Job     // the job made, or the one holding the key
	Outcome  Outcome // Created, or Skipped when the last run still holds the key
	Err      error   // the spec made no job (ErrInvalid): the due time passed without one
}

// dueAfter is the next due time of cron expression expr in tz after t.
func dueAfter(expr, tz string, t time.Time) (time.Time, error) {
	c, err := ParseCron(expr, tz)
	if err != nil {
		return time.Time{}, err
	}
	return c.Next(t), nil
}

// NoSchedule is the ErrNotFound of a name no schedule has, which is no
// job: its message does not say "no such job".
type NoSchedule string

func (n NoSchedule) Error() string { return "no schedule named " + string(n) }

// Is makes errors.Is(err, ErrNotFound) hold: exit 3.
func (n NoSchedule) Is(target error) bool { return target == ErrNotFound }

// AddSchedule stores a new schedule, due first at its next time after now.
// Errors: ErrInvalid (also for a cwd that is no directory now, which would
// make no job at any due time), ErrConflict (the name exists).
func (s *Store) AddSchedule(ctx context.Context, ns NewSchedule) (Schedule, error) {
	if err := ns.Validate(); err != nil {
		return Schedule{}, err
	}
	if err := checkCwd(ns.Job.Cwd); err != nil {
		return Schedule{}, err
	}
	now := s.Now()
	next, _ := dueAfter(ns.Cron, ns.TZ, now)
	sc := Schedule{Name: ns.Name, Cron: ns.Cron, TZ: ns.TZ, Spec: ns.Job.SpecJSON(), File: ns.File,
		NextDue: next, CreatedAt: now, UpdatedAt: now}
	if err := s.engine.InsertSchedule(ctx, sc); err != nil {
		return Schedule{}, err
	}
	return sc, nil
}

// Schedules lists every schedule by name, with its last job's state.
func (s *Store) Schedules(ctx context.Context) ([]Schedule, error) {
	return s.engine.Schedules(ctx)
}

// RemoveSchedule deletes a schedule (its jobs stay). A schedule defined by
// a file is removed by removing the file: ErrConflict says so.
func (s *Store) RemoveSchedule(ctx context.Context, name string) error {
	sc, err := s.engine.Schedule(ctx, name)
	if err != nil {
		return err
	}
	if sc.File {
		return fmt.Errorf("%w: schedule %s is defined by schedules/%s.json; remove that file instead", ErrConflict, name, name)
	}
	return s.engine.DeleteSchedule(ctx, name)
}

// PauseSchedule stops (paused) or restarts a schedule. A paused schedule
// makes no jobs; resumed, it is next due at its first time after now (what
// fell due while it was paused does not run). changed is false when the
// schedule was paused already (or, to resume, was not paused): then
// nothing is written.
func (s *Store) PauseSchedule(ctx context.Context, name string, paused bool) (sc Schedule, changed bool, err error) {
	sc, err = s.engine.Schedule(ctx, name)
	if err != nil {
		return Schedule{}, false, err
	}
	if sc.Paused == paused {
		return sc, false, nil
	}
	now := s.Now()
	next := sc.NextDue
	if !paused {
		next, _ = dueAfter(sc.Cron, sc.TZ, now)
	}
	if err := s.engine.SetSchedulePaused(ctx, name, paused, next, now); err != nil {
		return Schedule{}, false, err
	}
	sc.Paused, sc.NextDue, sc.UpdatedAt = paused, next, now
	return sc, true, nil
}

// SyncFileSchedules makes the schedules defined by files exactly defs: new
// ones are added, changed ones updated (a changed cron or tz is due again
// from now; otherwise the next due time stands), and file schedules without
// a file any more are removed. A def whose name a `schedule add` schedule
// holds is refused: its error is in the returned map, by name. Schedules
// named in waiting (their files are being written) are left as they are.
func (s *Store) SyncFileSchedules(ctx context.Context, defs []NewSchedule, waiting []string) (map[string]error, error) {
	have, err := s.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]Schedule{}
	for _, sc := range have {
		byName[sc.Name] = sc
	}
	refused := map[string]error{}
	keep := map[string]bool{}
	for _, name := range waiting {
		keep[name] = true
	}
	now := s.Now()
	for _, ns := range defs {
		if err := ns.Validate(); err != nil {
			refused[ns.Name] = err
			continue
		}
		old, exists := byName[ns.Name]
		if exists && !old.File {
			refused[ns.Name] = fmt.Errorf("%w: a schedule named %s was added with `schedule add`; rename the file or `queuectl schedule rm %s`", ErrConflict, ns.Name, ns.Name)
			continue
		}
		keep[ns.Name] = true
		spec := ns.Job.SpecJSON()
		if exists && old.Cron == ns.Cron && old.TZ == ns.TZ && old.Spec == spec {
			continue
		}
		next, _ := dueAfter(ns.Cron, ns.TZ, now)
		sc := Schedule{Name: ns.Name, Cron: ns.Cron, TZ: ns.TZ, Spec: spec, File: true, NextDue: next,
			CreatedAt: now, UpdatedAt: now}
		if exists {
			if old.Cron == ns.Cron && old.TZ == ns.TZ {
				sc.NextDue = old.NextDue
			}
			sc.Paused, sc.CreatedAt = old.Paused, old.CreatedAt
		}
		if err := s.engine.PutFileSchedule(ctx, sc); err != nil {
			return refused, err
		}
	}
	for _, sc := range have {
		if sc.File && !keep[sc.Name] && refused[sc.Name] == nil {
			if err := s.engine.DeleteSchedule(ctx, sc.Name); err != nil {
				return refused, err
			}
		}
	}
	return refused, nil
}

// FireDue makes one job for each schedule that is due at s.Now(), and
// returns what each became and the earliest next due time (zero when no
// schedule is active). However many due times passed since the schedule
// last fired (no worker ran), it fires once, and is next due at its first
// time after now. Each fire is one transaction that moves the schedule's
// next due time only if it still holds the value read, so of any number of
// workers in any number of processes exactly one makes the job.
//
// A schedule this process cannot read (its time zone is unknown to this
// host's time zone data, or a stored expression an older release took
// that this one refuses) makes no job, and the others fire all the same:
// the error, wrapping ErrInvalid, names each such schedule. A store error
// ends the pass.
func (s *Store) FireDue(ctx context.Context) ([]Fired, time.Time, error) {
	now := s.Now()
	all, err := s.Schedules(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	var fired []Fired
	var earliest time.Time
	var unreadable []error
	for _, sc := range all {
		if sc.Paused {
			continue
		}
		if !sc.DueChecked {
			var ok bool
			if sc, ok, err = s.checkDue(ctx, sc); err != nil {
				return fired, earliest, err
			} else if !ok {
				continue // changed meanwhile: the next pass reads it again
			}
		}
		next := sc.NextDue
		if !next.After(now) {
			var err error
			if next, err = dueAfter(sc.Cron, sc.TZ, now); err != nil {
				unreadable = append(unreadable, fmt.Errorf("schedule %s makes no jobs: %w", sc.Name, err))
				continue
			}
			f, ok, err := s.fire(ctx, sc, now, next)
			if errors.Is(err, ErrInvalid) {
				unreadable = append(unreadable, fmt.Errorf("schedule %s makes no jobs: %w", sc.Name, err))
				continue
			}
			if err != nil {
				return fired, earliest, err
			}
			if ok {
				fired = append(fired, f)
			}
		}
		if earliest.IsZero() || next.Before(earliest) {
			earliest = next
		}
	}
	return fired, earliest, errors.Join(unreadable...)
}

// checkDue makes sure an unchecked schedule's next due time is the one
// this worker's reading of its cron gives: the first due time after the
// moment it was computed from, UpdatedAt (every write that computes a next
// due time sets UpdatedAt to the now it computed it from). Another reading
// wrote a different one: a release that read cron fields otherwise (day 7,
// a field such as */2), or a process in another local time zone (`schedule
// add` without --tz, whose times are the worker's local time). That due
// time is corrected, once (the correction marks the schedule checked, so
// workers of different zones do not move it back and forth); ok is false
// when the schedule changed meanwhile. A next due time not after UpdatedAt
// was kept over a later write (a file's command edited) and stays as it is.
func (s *Store) checkDue(ctx context.Context, sc Schedule) (Schedule, bool, error) {
	c, err := ParseCron(sc.Cron, sc.TZ)
	if err != nil || !sc.NextDue.After(sc.UpdatedAt) {
		return sc, true, nil // FireDue says why it cannot read it
	}
	want := c.Next(sc.UpdatedAt)
	if want.IsZero() || want.Equal(sc.NextDue) {
		return sc, true, nil
	}
	ok, err := s.engine.CorrectScheduleDue(ctx, sc.Name, sc.NextDue, want, sc.UpdatedAt)
	if err != nil || !ok {
		return sc, false, err
	}
	sc.NextDue, sc.DueChecked = want, true
	return sc, true, nil
}

// fire makes sc's job for its due time, unless another worker did.
func (s *Store) fire(ctx context.Context, sc Schedule, now, next time.Time) (Fired, bool, error) {
	nj, err := scheduledJob(sc, sc.NextDue)
	if err != nil {
		return Fired{}, false, err
	}
	cfg, err := s.Config(ctx)
	if err != nil {
		return Fired{}, false, err
	}
	p := FireParams{Name: sc.Name, Due: sc.NextDue, Next: next, Now: now}
	// The due times after this one up to now were missed (no worker ran):
	// this one job stands for them all; the last of them is recorded.
	if c, err := ParseCron(sc.Cron, sc.TZ); err == nil {
		if missed := lastDueIn(c, sc.NextDue, now); !missed.IsZero() {
			p.Skipped, p.SkipReason = missed, SkipMissed
		}
	}
	// A spec that no longer makes a job is reported for this due time,
	// which passes all the same. A cwd removed since the schedule was
	// added is not such: the job is made, and its run fails saying so, and
	// retries, dies and runs on_dead as any job's would, where a due time
	// without a job was told only in the worker's log.
	row, jobErr := buildRow(cfg, nj, now)
	if jobErr == nil {
		p.Job = &row
	} else if p.Skipped.IsZero() {
		p.Skipped, p.SkipReason = sc.NextDue, SkipRefused
	}
	r, ok, err := s.engine.FireSchedule(ctx, p)
	if err != nil || !ok {
		return Fired{}, false, err
	}
	if jobErr != nil {
		r.Err = jobErr
	}
	return Fired{Schedule: sc.Name, Due: sc.NextDue, Job: r.Job, Outcome: r.Outcome, Err: r.Err}, true, nil
}

// FireParams is one due time of a schedule becoming a job.
type FireParams struct {
	Name string
	Due  time.Time // the next due time read; the fire happens only if it still is
	Next time.Time // the next due time after this fire
	Job  *NewRow   // nil: the spec makes no job now; the due time passes all the same
	Now  time.Time
	// Skipped, when set, is the last due time after Due that makes no job
	// of its own, for SkipReason. When zero, the engine records Due itself
	// as skipped if its job is not made: SkipOverlap or SkipRefused.
	Skipped    time.Time
	SkipReason string
}

// SkipColumns returns Skipped (as Unix nanoseconds) and SkipReason, or two
// nils when Skipped is zero: SQL NULLs that keep what is recorded.
func (p FireParams) SkipColumns() (skipped, reason any) {
	if p.Skipped.IsZero() {
		return nil, nil
	}
	return p.Skipped.UnixNano(), p.SkipReason
}

// lastDueIn is the last due time of c in (after, until], or zero. It looks
// back from until in doubling steps, so a schedule missed for a year costs
// a few of its due times, not all of them.
func lastDueIn(c Cron, after, until time.Time) time.Time {
	for back := time.Minute; ; back *= 2 {
		from := until.Add(-back)
		if !from.After(after) {
			from = after
		}
		var last time.Time
		for n := c.Next(from); !n.IsZero() && !n.After(until); n = c.Next(n) {
			last = n
		}
		if !last.IsZero() || from.Equal(after) {
			return last
		}
	}
}

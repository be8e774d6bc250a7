package claim

import (
	"context"
	"time"
)

// WorkerInfo is one `worker start` process in the registry.
type WorkerInfo struct {
	ID   string
	Host string
	PID  int
	// PIDStart is when the process PID started, in clock ticks after its
	// host's boot (/proc/PID/stat): a process holding PID that started at
	// another time is not the worker, its number came round again. 0 when
	// unknown (a row of an older queuectl, a host without /proc).
	PIDStart uint64
	// Slots is what the worker is to have: its --count, or what `worker
	// scale` set since. SlotsApplied is what it claims with, once it has
	// read Slots (ScaledTo); 0 in a row of an older queuectl.
	Slots        int
	SlotsApplied int
	Queues       []string
	StartedAt    time.Time
	HeartbeatAt  time.Time
	// SilentSince is when the store last could have heard from the
	// worker: its heartbeat, or the start of the store's server when that
	// came later (a PostgreSQL server down for longer than a lease heard
	// nobody meanwhile, and each worker renews only once it is back).
	// Zero where the store has no server (SQLite): the heartbeat says.
	SilentSince time.Time
	Stopping    bool
	// Lease and HeartbeatInterval are the settings the worker runs with:
	// it reads them once, when it starts, so config may say otherwise
	// now. Zero in a row an older queuectl registered.
	Lease             time.Duration
	HeartbeatInterval time.Duration
}

// Silence is how long, at now, the worker has not been heard from as far
// as the store can tell (SilentSince): what tells a worker of another
// host that died from one the store could not hear.
func (w WorkerInfo) Silence(now time.Time) time.Duration {
	if w.SilentSince.After(w.HeartbeatAt) {
		return now.Sub(w.SilentSince)
	}
	return now.Sub(w.HeartbeatAt)
}

// LeaseOr is the lease the worker runs with, which another host's reader
// judges it by; lease (the reader's config) for a row that does not say.
func (w WorkerInfo) LeaseOr(lease time.Duration) time.Duration {
	if w.Lease > 0 {
		return w.Lease
	}
	return lease
}

// HeartbeatOr is how often the worker renews its heartbeat; every (the
// reader's config) for a row that does not say.
func (w WorkerInfo) HeartbeatOr(every time.Duration) time.Duration {
	if w.HeartbeatInterval > 0 {
		return w.HeartbeatInterval
	}
	return every
}

// RegisterWorker adds a worker process to the registry, started at
// w.StartedAt (now when zero), with a heartbeat now.
func (s *Store) RegisterWorker(ctx context.Context, w WorkerInfo) error {
	now := s.Now().UTC()
	w.HeartbeatAt = now
	if w.StartedAt.IsZero() {
		w.StartedAt = now
	}
	return s.engine.RegisterWorker(ctx, w)
}

// RemoveWorker deletes a worker from the registry: on a clean exit, or when
// a reaper finds it gone.
func (s *Store) RemoveWorker(ctx context.Context, id string) error {
	return s.engine.RemoveWorker(ctx, id)
}

// Workers lists the registry, oldest first. Rows of crashed workers stay
// until a reaper removes them; callers judge liveness by HeartbeatAt
// against the worker's own lease (LeaseOr).
func (s *Store) Workers(ctx context.Context) ([]WorkerInfo, error) {
	return s.engine.Workers(ctx)
}

// RequestStop asks every registered worker to stop gracefully and returns
// how many were asked. Workers see the request on their next wake-up.
func (s *Store) RequestStop(ctx context.Context) (int, error) {
	return s.engine.RequestStop(ctx)
}

// StopRequested reports whether `worker stop` asked worker id to stop.
func (s *Store) StopRequested(ctx context.Context, id string) (bool, error) {
	return s.engine.StopRequested(ctx, id)
}

// maxSlots bounds a worker's slots.
const maxSlots = 1024

// ScaleWorkers gives every live worker that is not stopping n slots, from
// its next claim on (running jobs go on), and returns how many workers it
// reached. ErrInvalid for n out of 1 to 1024.
func (s *Store) ScaleWorkers(ctx context.Context, n int) (int, error) {
	if n < 1 || n > maxSlots {
		return 0, invalidf("%d slots: give 1 to %d", n, maxSlots)
	}
	return s.engine.ScaleWorkers(ctx, n)
}

// WorkerSlots returns the slots worker id is to have (see ScaleWorkers);
// ErrNotFound when it is not registered.
func (s *Store) WorkerSlots(ctx context.Context, id string) (int, error) {
	return s.engine.WorkerSlots(ctx, id)
}

// ScaledTo records that worker id claims with n slots now, as a scale
// asked (WorkerInfo.SlotsApplied), and wakes those waiting for it.
func (s *Store) ScaledTo(ctx context.Context, id string, n int) error {
	return s.engine.ScaledTo(ctx, id, n)
}

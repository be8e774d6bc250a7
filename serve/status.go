package serve

import (
	"context"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
)

// status gathers what `status` shows, the way the CLI does.
func (s *Server) status(ctx context.Context) (report.Status, error) {
	counts, err := s.store.Counts(ctx)
	if err != nil {
		return report.Status{}, err
	}
	waiting, rejected, err := spool.Count(s.dirs)
	if err != nil {
		return report.Status{}, err
	}
	workers, err := s.liveWorkers(ctx)
	if err != nil {
		return report.Status{}, err
	}
	queues, err := s.store.Queues(ctx)
	if err != nil {
		return report.Status{}, err
	}
	perQueue, err := s.store.QueueCounts(ctx)
	if err != nil {
		return report.Status{}, err
	}
	paused, err := s.store.Paused(ctx)
	if err != nil {
		return report.Status{}, err
	}
	reasons, err := s.store.PendingCounts(ctx)
	if err != nil {
		return report.Status{}, err
	}
	busy, err := run.BusySlots(ctx, s.store, workers)
	if err != nil {
		return report.Status{}, err
	}
	return report.Status{Counts: counts, SpoolWaiting: waiting, Rejected: rejected, Workers: workers, Busy: busy,
		Queues: queues, QueueCounts: perQueue, Paused: paused, PendingReasons: reasons}, nil
}

// liveWorkers lists the registered workers that still run: on this host by
// pid, elsewhere by heartbeat within the lease.
func (s *Server) liveWorkers(ctx context.Context) ([]claim.WorkerInfo, error) {
	all, err := s.store.Workers(ctx)
	if err != nil {
		return nil, err
	}
	var live []claim.WorkerInfo
	for _, w := range all {
		if !run.Gone(w, s.host, s.now(), s.lease) {
			live = append(live, w)
		}
	}
	return live, nil
}

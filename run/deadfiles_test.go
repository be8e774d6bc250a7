package run

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A sync of dead/ that cannot reach the store is the worker's outage,
// said once as that (EventUnreachable), not a warning of its own on top
// of it: during a server restart the worker said both.
func TestKeepDeadSaysAnOutageOnce(t *testing.T) {
	var mu sync.Mutex
	var events []Event
	w := &Worker{Config: claim.Config{HeartbeatInterval: time.Millisecond}}
	w.Events = func(e Event) { mu.Lock(); defer mu.Unlock(); events = append(events, e) }
	w.sayReach()
	down := fmt.Errorf("%w: list paused queues: connection refused", claim.ErrUnavailable)
	synced := make(chan struct{})
	w.SyncDead = func(context.Context) error { synced <- struct{}{}; return down }
	changes := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); w.keepDead(ctx, changes) }()
	for range 3 {
		changes <- struct{}{}
		<-synced
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	var kinds []EventKind
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	if len(events) != 1 || events[0].Kind != EventUnreachable {
		t.Errorf("3 syncs of dead/ with the store away: events %v, want one %s", kinds, EventUnreachable)
	}
}

package claim_test

import (
	"context"
	"iter"
	"sync"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// countingEngine is a real engine that counts the calls a Store makes of
// some of its operations (each one a round trip, or a transaction): how
// many a command costs is behaviour, and the slowness of a big queue.
type countingEngine struct {
	claim.Engine
	mu    sync.Mutex
	calls map[string]int
}

func (e *countingEngine) count(op string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls[op]++
}

// Calls returns how many times op was called, and starts its count again.
func (e *countingEngine) Calls(op string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.calls[op]
	delete(e.calls, op)
	return n
}

func (e *countingEngine) Get(ctx context.Context, id string) (claim.Job, error) {
	e.count("Get")
	return e.Engine.Get(ctx, id)
}

func (e *countingEngine) GetAll(ctx context.Context, ids []string) iter.Seq2[claim.Job, error] {
	e.count("GetAll")
	return e.Engine.GetAll(ctx, ids)
}

func (e *countingEngine) Jobs(ctx context.Context, f claim.Filter) iter.Seq2[claim.Job, error] {
	e.count("Jobs")
	return e.Engine.Jobs(ctx, f)
}

func (e *countingEngine) EndDependents(ctx context.Context, ps []claim.EndDependentsParams) ([]claim.Job, error) {
	e.count("EndDependents")
	return e.Engine.EndDependents(ctx, ps)
}

// openCounted opens another Store on db whose engine counts its calls.
func (db testDB) openCounted(tb testing.TB) (*claim.Store, *countingEngine) {
	tb.Helper()
	e, err := claim.OpenEngine(db.location)
	if err != nil {
		tb.Fatalf("OpenEngine(%q) = %v", db.location, err)
	}
	ce := &countingEngine{Engine: e, calls: map[string]int{}}
	s := claim.New(ce)
	tb.Cleanup(func() { s.Close() })
	return s, ce
}

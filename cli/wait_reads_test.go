package cli

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/sqlite"
	"github.com/urfave/cli/v2"
)

// readsEngine is a real SQLite engine that counts the reads of jobs wait
// makes: each Get, and how many ids each GetAll reads. Once it has read
// every job (in one GetAll, or a Get each), it calls read, once.
type readsEngine struct {
	claim.Engine
	n      int    // the jobs waited for
	read   func() // called once, after every job was read
	mu     sync.Mutex
	gets   int
	getAll []int
	fired  bool
}

func (e *readsEngine) fire(all bool) {
	e.mu.Lock()
	fire := !e.fired && (all || e.gets >= e.n)
	e.fired = e.fired || fire
	e.mu.Unlock()
	if fire {
		e.read()
	}
}

func (e *readsEngine) Get(ctx context.Context, id string) (claim.Job, error) {
	j, err := e.Engine.Get(ctx, id)
	e.mu.Lock()
	e.gets++
	e.mu.Unlock()
	e.fire(false)
	return j, err
}

func (e *readsEngine) GetAll(ctx context.Context, ids []string) iter.Seq2[claim.Job, error] {
	e.mu.Lock()
	e.getAll = append(e.getAll, len(ids))
	e.mu.Unlock()
	return func(yield func(claim.Job, error) bool) {
		for j, err := range e.Engine.GetAll(ctx, ids) {
			if !yield(j, err) {
				return
			}
		}
		e.fire(len(ids) == e.n)
	}
}

// TestWaitReadsOnlyUnfinishedJobs: a wait for many jobs reads them in one
// statement, and at each look after the first only those not finished at
// the last; once all are seen finished, one more read of every job
// confirms it. A wait --all of 165,000 jobs read every one of them on its
// own at each look: 9 s of CPU in a 15 s wait.
func TestWaitReadsOnlyUnfinishedJobs(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "queue.db")
	eng, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	other, err := claim.Open(path) // as another process would
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const n = 300
	var batch []claim.NewJob
	for i := range n {
		batch = append(batch, claim.NewJob{ID: fmt.Sprintf("j%03d", i), Command: "true"})
	}
	if _, err := other.EnqueueAll(ctx, batch); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n - 1 {
		ids = append(ids, batch[i].ID)
		if _, _, _, err := other.Cancel(ctx, batch[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	last := batch[n-1].ID
	ids = append(ids, last)

	e := &readsEngine{Engine: eng, n: n, read: func() {
		if _, _, _, err := other.Cancel(ctx, last); err != nil {
			t.Error(err)
		}
	}}
	s := claim.New(e)
	defer s.Close()
	h := &home{store: s, config: claim.Config{PollInterval: 20 * time.Millisecond, Lease: time.Minute}}
	var stderr bytes.Buffer
	c := cli.NewContext(&cli.App{ErrWriter: &stderr}, nil, nil)
	jobs, err := watchJobs(ctx, c, h, ids, nil)
	if err != nil || len(jobs) != n {
		t.Fatalf("watchJobs = %d jobs, %v; want %d", len(jobs), err, n)
	}
	for _, j := range jobs {
		if j.State != claim.Canceled {
			t.Fatalf("watchJobs returned %s %s, want every job canceled", j.ID, j.State)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gets > 2 {
		t.Errorf("the wait read %d jobs one by one, want at most 2 (the one left, between looks)", e.gets)
	}
	if k := len(e.getAll); k < 2 || e.getAll[0] != n || e.getAll[k-1] != n {
		t.Errorf("the wait's reads of many jobs = %v, want all %d first and last", e.getAll, n)
	} else {
		for _, m := range e.getAll[1 : k-1] {
			if m != 1 {
				t.Errorf("the wait's reads of many jobs = %v, want only the one left between the first and the last", e.getAll)
				break
			}
		}
	}
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// TestDurableAfterLight: the writes SPEC §6 needs on disk (an enqueue, a
// spool batch) commit at synchronous=FULL even on a connection that the
// claim side just set to NORMAL, and the claim side commits at NORMAL.
func TestDurableAfterLight(t *testing.T) {
	ctx := context.Background()
	e, err := Open(filepath.Join(t.TempDir(), "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s := claim.New(e)
	defer s.Close()
	level := func() int {
		t.Helper()
		var n int
		if err := e.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const normal, full = 1, 2
	if got := level(); got != full {
		t.Fatalf("synchronous of a new store = %d, want FULL (%d)", got, full)
	}
	c := claim.Claimant{WorkerID: "w", Host: "h", PID: 1, Lease: time.Minute, LogDir: t.TempDir()}
	steps := []struct {
		name string
		do   func() error
		want int
	}{
		{"Enqueue", func() error { _, err := s.Enqueue(ctx, claim.NewJob{Command: "true"}); return err }, full},
		{"Claim", func() error { _, _, err := s.Claim(ctx, c); return err }, normal},
		{"EnqueueEach", func() error { _, err := s.EnqueueEach(ctx, []claim.NewJob{{Command: "true"}}); return err }, full},
		{"Claim again", func() error { _, _, err := s.Claim(ctx, c); return err }, normal},
		{"EnqueueAll", func() error { _, err := s.EnqueueAll(ctx, []claim.NewJob{{Command: "true"}}); return err }, full},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := level(); got != st.want {
			t.Errorf("synchronous after %s = %d, want %d", st.name, got, st.want)
		}
	}
}

// TestGroupCommit: writes that come while one is being committed share the
// next transaction, each in its own savepoint: one that fails or whose
// context ended leaves nothing behind, and the others commit.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	e, err := Open(filepath.Join(t.TempDir(), "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	set := func(tx *sql.Tx, key string) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO config (key, value) VALUES (?, 'x')", key)
		return err
	}
	// The first write holds its transaction open until the others wait.
	const n = 6
	release := make(chan struct{})
	var first *sql.Tx
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- e.write(ctx, light, func(tx *sql.Tx) error {
			first = tx
			<-release
			return set(tx, "first")
		})
	}()
	waitFor(t, func() bool { e.group.mu.Lock(); defer e.group.mu.Unlock(); return e.group.busy })
	refused := errors.New("refused")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	var mu sync.Mutex
	txs := map[*sql.Tx]bool{}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wctx := ctx
		if i == 4 {
			wctx = canceled
		}
		wg.Go(func() {
			errs[i] = e.write(wctx, light, func(tx *sql.Tx) error {
				mu.Lock()
				txs[tx] = true
				mu.Unlock()
				if err := set(tx, fmt.Sprintf("k%d", i)); err != nil {
					return err
				}
				if i == 2 {
					return refused // after its insert: the savepoint must undo it
				}
				return nil
			})
		})
	}
	waitFor(t, func() bool { e.group.mu.Lock(); defer e.group.mu.Unlock(); return len(e.group.queue) == n })
	close(release)
	wg.Wait()
	if err := <-firstDone; err != nil {
		t.Fatalf("first write: %v", err)
	}
	if len(txs) != 1 || txs[first] {
		t.Errorf("the %d waiting writes ran in %d transactions (the first's among them: %v), want 1 of their own", n, len(txs), txs[first])
	}
	for i, err := range errs {
		switch {
		case i == 2 && !errors.Is(err, refused):
			t.Errorf("write %d = %v, want its own error", i, err)
		case i == 4 && !errors.Is(err, context.Canceled):
			t.Errorf("write %d = %v, want context.Canceled", i, err)
		case i != 2 && i != 4 && err != nil:
			t.Errorf("write %d = %v", i, err)
		}
	}
	var keys []string
	rows, err := e.db.QueryContext(ctx, "SELECT key FROM config WHERE value = 'x' ORDER BY key")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		rows.Scan(&k)
		keys = append(keys, k)
	}
	if got, want := strings.Join(keys, " "), "first k0 k1 k3 k5"; got != want {
		t.Errorf("committed keys %q, want %q", got, want)
	}
}

// waitFor waits for cond, for at most 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		runtime.Gosched()
	}
}

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// durability is what a committed write survives.
type durability int

const (
	// durable commits are fsync'd (synchronous=FULL) before they return, so
	// they survive a power cut: enqueues, spool ingestion, config, dlq.
	durable durability = iota
	// light commits (synchronous=NORMAL) are in the OS, not yet on the disk,
	// when they return. In WAL mode that survives the death of any process,
	// and a power cut can roll back only the last commits, never corrupt the
	// file. Only the per-job path of a worker uses it: claims, process
	// groups, completions, lease renewals, the worker registry. What a power
	// cut takes back is a job that runs again (at least once, never lost).
	// DECISIONS.md has the reasoning.
	light
)

// tx runs fn in one durable BEGIN IMMEDIATE transaction and commits it.
func (e *Engine) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return e.write(ctx, durable, fn)
}

// write runs fn in one BEGIN IMMEDIATE transaction and commits it with
// durability d. Every write of the store goes through here, so that the
// connection's synchronous level is always the one the write asked for.
//
// Writes that come while another is being committed are committed together
// (group commit, see commitGroup): the process has one connection, so they
// would queue for it anyway, and one transaction writes the pages they share
// (the job rows, the indexes, the runs) to the WAL once instead of once each.
func (e *Engine) write(ctx context.Context, d durability, fn func(*sql.Tx) error) error {
	w := &pendingWrite{ctx: ctx, d: d, fn: fn, turn: make(chan bool, 1)}
	g := &e.group
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !lead {
		lead = <-w.turn // false: a leader committed w
	}
	if lead {
		e.lead()
	}
	return e.fault(w.err)
}

// pendingWrite is one call of write waiting for its commit.
type pendingWrite struct {
	ctx  context.Context
	d    durability
	fn   func(*sql.Tx) error
	err  error     // how it ended; read after turn
	turn chan bool // true: lead the next group; false: done
}

// writeGroup queues the writes that wait while one group is committed.
type writeGroup struct {
	mu    sync.Mutex
	queue []*pendingWrite
	busy  bool // a leader is committing
	// commits counts the groups committed, by their leaders (one at a
	// time), to checkpoint every checkpointEvery.
	commits int
}

// maxGroup bounds the writes of one transaction, so that none waits for
// more than a few others.
const maxGroup = 32

// lead commits the writes queued now (the leader's own among them), then
// hands the lead to the first write that came meanwhile, if any: a leader
// commits one group, so no caller is held committing others' writes.
func (e *Engine) lead() {
	g := &e.group
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	group := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()
	e.commitGroup(group)
	if g.commits++; g.commits%checkpointEvery == 0 {
		// Its failure is the next write's to report: a file overwritten
		// is found by Check, and a WAL that grows only costs reads.
		e.checkpoint(context.Background())
	}
	g.mu.Lock()
	var next *pendingWrite
	if len(g.queue) > 0 {
		next = g.queue[0]
	} else {
		g.busy = false
		g.queue = nil
	}
	g.mu.Unlock()
	for _, w := range group {
		w.turn <- false
	}
	if next != nil {
		next.turn <- true
	}
}

// commitGroup commits group in one transaction, each write in a savepoint
// of its own when there are several: a write that fails (ErrLost, ErrNoJob,
// a refusal) is undone alone, and the others commit. The commit is durable
// if any write asked for it. A failure to begin or commit fails them all:
// none is on disk.
func (e *Engine) commitGroup(group []*pendingWrite) {
	if len(group) == 1 {
		w := group[0]
		w.err = e.writeOnce(w.ctx, w.d, w.fn)
		return
	}
	d := light
	for _, w := range group {
		if w.d == durable {
			d = durable
		}
	}
	ctx, cancel := groupContext(group)
	defer cancel()
	e.prepare(ctx, savepoint, releaseSavepoint, rollbackSavepoint)
	err := e.writeOnce(ctx, d, func(tx *sql.Tx) error {
		for _, w := range group {
			if w.err = w.ctx.Err(); w.err != nil {
				continue
			}
			if _, err := e.exec(ctx, tx, savepoint); err != nil {
				return err
			}
			if w.err = w.fn(tx); w.err != nil {
				if _, err := e.exec(ctx, tx, rollbackSavepoint); err != nil {
					return err
				}
			}
			if _, err := e.exec(ctx, tx, releaseSavepoint); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for _, w := range group {
			w.err = err
		}
	}
}

// The savepoint of each write in a group. ROLLBACK TO keeps the savepoint
// open, so it is released as well.
const (
	savepoint         = "SAVEPOINT grouped"
	releaseSavepoint  = "RELEASE grouped"
	rollbackSavepoint = "ROLLBACK TO grouped"
)

// groupContext is the context of a group's transaction: it ends when the
// context of every write in the group has ended, so that no caller's
// cancel stops the others' commit.
func groupContext(group []*pendingWrite) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(group[0].ctx))
	left := int32(len(group))
	stops := make([]func() bool, 0, len(group))
	for _, w := range group {
		stops = append(stops, context.AfterFunc(w.ctx, func() {
			if atomic.AddInt32(&left, -1) == 0 {
				cancel()
			}
		}))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

func (e *Engine) writeOnce(ctx context.Context, d durability, fn func(*sql.Tx) error) error {
	// Pin the connection: synchronous is set per connection, and cannot be
	// changed inside a transaction.
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer conn.Close()
	if err := e.setSync(ctx, conn, d); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := e.Check(); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// syncState remembers the synchronous level of the store's connection, so
// that a run of light writes costs one PRAGMA, not one per write.
type syncState struct {
	mu    sync.Mutex
	conn  any // the driver connection the level was set on
	level durability
}

// setSync sets conn's synchronous level to d unless it is known to be so.
// A connection the store has not seen yet is at FULL (the DSN), but is set
// anyway: only a level known for this very connection is trusted.
func (e *Engine) setSync(ctx context.Context, conn *sql.Conn, d durability) error {
	var dc any
	conn.Raw(func(c any) error { dc = c; return nil })
	e.level.mu.Lock()
	known := e.level.conn == dc && e.level.level == d
	if !known {
		e.level.conn = nil // unknown until the PRAGMA succeeds
	}
	e.level.mu.Unlock()
	if known {
		return nil
	}
	pragma := "PRAGMA synchronous = FULL"
	if d == light {
		pragma = "PRAGMA synchronous = NORMAL"
	}
	if _, err := conn.ExecContext(ctx, pragma); err != nil {
		return fmt.Errorf("set synchronous: %w", err)
	}
	e.level.mu.Lock()
	e.level.conn, e.level.level = dc, d
	e.level.mu.Unlock()
	return nil
}

// stmtCache keeps statements prepared for the life of a Store: parsing a
// statement costs SQLite more than running it, and preparing one costs the
// same as running it unprepared once. Outside a transaction a statement is
// prepared on first use. Inside one it cannot be (the transaction holds
// the only connection): it runs unprepared unless it was prepared before
// the transaction began (Store.prepare).
type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// maxStmts bounds the cache; queries past it (odd filter combinations)
// simply run unprepared.
const maxStmts = 64

func (c *stmtCache) get(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[q]
}

// prepare prepares q on db and caches it, unless the cache is full. It
// must not run inside a transaction of db. Errors leave q unprepared, and
// running it unprepared will report them.
func (c *stmtCache) prepare(ctx context.Context, db *sql.DB, q string) *sql.Stmt {
	c.mu.Lock()
	st, full := c.stmts[q], len(c.stmts) >= maxStmts
	c.mu.Unlock()
	if st != nil || full {
		return st
	}
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.stmts[q]; old != nil {
		st.Close()
		return old
	}
	if c.stmts == nil {
		c.stmts = map[string]*sql.Stmt{}
	}
	c.stmts[q] = st
	return st
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
}

// prepare readies the statements a transaction is about to run. Call it
// before the transaction begins.
func (e *Engine) prepare(ctx context.Context, queries ...string) {
	for _, q := range queries {
		e.stmts.prepare(ctx, e.db, q)
	}
}

// stmt returns q prepared, in tx when tx is not nil, or nil to run q
// unprepared.
func (e *Engine) stmt(ctx context.Context, tx *sql.Tx, q string) *sql.Stmt {
	if tx == nil {
		return e.stmts.prepare(ctx, e.db, q)
	}
	if st := e.stmts.get(q); st != nil {
		return tx.StmtContext(ctx, st)
	}
	return nil
}

// exec runs q in tx (nil: on its own) through the statement cache.
func (e *Engine) exec(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	if st := e.stmt(ctx, tx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	if tx != nil {
		return tx.ExecContext(ctx, q, args...)
	}
	return e.db.ExecContext(ctx, q, args...)
}

// query runs q in tx (nil: on its own) through the statement cache.
func (e *Engine) query(ctx context.Context, tx *sql.Tx, q string, args ...any) (*sql.Rows, error) {
	if st := e.stmt(ctx, tx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	if tx != nil {
		return tx.QueryContext(ctx, q, args...)
	}
	return e.db.QueryContext(ctx, q, args...)
}

// queryRow runs q in tx (nil: on its own) through the statement cache.
func (e *Engine) queryRow(ctx context.Context, tx *sql.Tx, q string, args ...any) *sql.Row {
	if st := e.stmt(ctx, tx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	if tx != nil {
		return tx.QueryRowContext(ctx, q, args...)
	}
	return e.db.QueryRowContext(ctx, q, args...)
}

package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A run of a batch is rows inserted by one statement, insertRun's.
const (
	// maxRun keeps a statement's arguments (jobArgs a row) under SQLite's
	// limit of 32,766, and is the chunk of a stream.
	maxRun = 1000
	// minRun: fewer rows go one by one, through the prepared insertJob.
	minRun = 4
)

// runSize is the rows of the run that starts a stretch of n rows (n >=
// minRun) that may go together: maxRun, or the largest power of two up to
// n. Runs of a few sizes only are statements of a few texts, which the
// engine keeps prepared (inserter.stmt): preparing a statement of hundreds
// of rows costs about as much as running it, and the spool's batches, the
// socket's and the enqueue loop's come in every size.
func runSize(n int) int {
	if n >= maxRun {
		return maxRun
	}
	return 1 << (bits.Len(uint(n)) - 1)
}

// insertTexts holds insertJobs(n) for each run size, made once.
var insertTexts sync.Map // int -> string

func insertText(n int) string {
	if q, ok := insertTexts.Load(n); ok {
		return q.(string)
	}
	q, _ := insertTexts.LoadOrStore(n, insertJobs(n))
	return q.(string)
}

// alone says whether row must be inserted on its own: a re-drive changes
// a dead job that later rows may conflict with, and in an EnqueueEach batch
// a job whose dependencies are refused has its insert taken back, which a
// later row with its id or unique key would find gone.
func alone(row claim.NewRow, each bool) bool {
	return row.Redrive || each && len(row.After) > 0
}

// distinctIDs says whether no id is given twice in rows: insertRun tells
// the rows it inserted by their ids.
func distinctIDs(rows []claim.NewRow) bool {
	seen := make(map[string]struct{}, len(rows))
	for _, r := range rows {
		if _, ok := seen[r.Job.ID]; ok {
			return false
		}
		seen[r.Job.ID] = struct{}{}
	}
	return true
}

// insertJobs is insertJob for n rows: SQLite inserts them in order, each
// checked against the rows before it as if it were inserted alone, and
// returns the seq and id of each it inserted.
func insertJobs(n int) string {
	var b strings.Builder
	head, _, _ := strings.Cut(insertJob, "VALUES")
	row := "(?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	b.Grow(len(head) + n*(len(row)+2) + 64)
	b.WriteString(head)
	b.WriteString("VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	b.WriteString("\nON CONFLICT DO NOTHING\nRETURNING seq, id")
	return b.String()
}

// inserter holds the insert statements of one transaction.
type inserter struct {
	e      *Engine
	tx     *sql.Tx
	one    *sql.Stmt         // insertJob, or nil to run it unprepared
	runs   map[int]*sql.Stmt // insertJobs(n) by n, for tx
	missed []string          // texts of runs the engine had not prepared
	args   []any             // insertRun's, kept for the next run
	out    []claim.Result    // enqueueIn's, kept for the next batch of a stream
}

// results returns n zero Results, in memory reused from the last batch:
// a stream's each is done with them when the next batch comes.
func (ins *inserter) results(n int) []claim.Result {
	if cap(ins.out) < n {
		ins.out = make([]claim.Result, n)
	}
	ins.out = ins.out[:n]
	clear(ins.out)
	return ins.out
}

func (e *Engine) inserter(ctx context.Context, tx *sql.Tx) *inserter {
	return &inserter{e: e, tx: tx, one: e.stmt(ctx, tx, insertJob)}
}

// stmt returns insertJobs(n) for the transaction: the engine's prepared
// statement, or else one prepared in the transaction, whose text close
// has the engine prepare for the transactions after.
func (ins *inserter) stmt(ctx context.Context, n int) (*sql.Stmt, error) {
	if st := ins.runs[n]; st != nil {
		return st, nil
	}
	q := insertText(n)
	st := ins.e.stmt(ctx, ins.tx, q)
	if st == nil {
		var err error
		if st, err = ins.tx.PrepareContext(ctx, q); err != nil {
			return nil, fmt.Errorf("insert jobs: %w", err)
		}
		ins.missed = append(ins.missed, q)
	}
	if ins.runs == nil {
		ins.runs = map[int]*sql.Stmt{}
	}
	ins.runs[n] = st
	return st, nil
}

// closeAfter closes the statements of a transaction that has ended (ins
// nil: it never began) and has the engine prepare the texts it missed,
// outside it. Call it after the wake-up of listeners: a first prepare of a
// size waits for the writer's connection.
func (ins *inserter) closeAfter(ctx context.Context) {
	if ins == nil {
		return
	}
	for _, st := range ins.runs {
		st.Close()
	}
	ins.e.prepare(ctx, ins.missed...)
}

// stored is a row that insertJobs returned.
type stored struct {
	seq int64
	id  string
}

// insertRun inserts rows (their ids distinct, none alone) with one
// statement, then settles each row in order: an inserted row gets its
// dependencies, a skipped one the job that refused it, found among the
// jobs stored before the next row that was inserted — what the row would
// have found inserted alone. settle's error ends the run.
func (e *Engine) insertRun(ctx context.Context, tx *sql.Tx, ins *inserter, rows []claim.NewRow, now time.Time, settle func(k int, r claim.Result, err error) error) error {
	st, err := ins.stmt(ctx, len(rows))
	if err != nil {
		return err
	}
	args := ins.args[:0]
	for _, row := range rows {
		args = appendJobArgs(args, row)
	}
	// Without ctx's cancellation, as in insert: the transaction ends with ctx.
	res, err := st.QueryContext(context.WithoutCancel(ctx), args...)
	clear(args)
	ins.args = args
	if err != nil {
		return fmt.Errorf("insert jobs: %w", err)
	}
	got := make([]stored, 0, len(rows))
	for res.Next() {
		var s stored
		if err := res.Scan(&s.seq, &s.id); err != nil {
			res.Close()
			return fmt.Errorf("insert jobs: %w", err)
		}
		got = append(got, s)
	}
	if err := res.Close(); err != nil {
		return fmt.Errorf("insert jobs: %w", err)
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("insert jobs: %w", err)
	}
	// RETURNING's order is not promised; seq is the order of insertion.
	slices.SortFunc(got, func(a, b stored) int { return cmp.Compare(a.seq, b.seq) })
	for k, row := range rows {
		var r claim.Result
		if len(got) > 0 && got[0].id == row.Job.ID {
			r, err = e.created(ctx, tx, row, got[0].seq)
			got = got[1:]
		} else {
			before := int64(math.MaxInt64)
			if len(got) > 0 {
				before = got[0].seq
			}
			r, err = e.explainConflict(ctx, tx, row, now, before)
		}
		if err := settle(k, r, err); err != nil {
			return err
		}
	}
	return nil
}

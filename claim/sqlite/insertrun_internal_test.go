package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// enqueueOneByOne is how enqueueIn stored a batch before runs: every row
// with a statement of its own. TestInsertRunAsOneByOne holds the two to
// the same outcomes.
func (e *Engine) enqueueOneByOne(t *testing.T, p claim.EnqueueParams) ([]claim.Result, error) {
	var out []claim.Result
	err := e.tx(t.Context(), func(tx *sql.Tx) error {
		out = make([]claim.Result, len(p.Jobs))
		for i, row := range p.Jobs {
			r, err := e.enqueueOne(t.Context(), tx, nil, row, p)
			if err := settleRow(out, i, r, err, p.Each); err != nil {
				return err
			}
		}
		return e.countCreated(t.Context(), tx, out)
	})
	return out, err
}

// TestInsertRunAsOneByOne: a batch stored with runs of rows in one
// statement gets, row by row, the outcomes it got with a statement a row:
// the same jobs created, skipped, duplicate or refused (a row skipped on
// row k of a statement is explained by the jobs before it, not by those
// the statement inserted after it), the same dependencies, the same first
// refusal of an all-or-nothing batch, and the same tables after.
func TestInsertRunAsOneByOne(t *testing.T) {
	now := time.Unix(1_800_000_000, 0).UTC()
	row := func(id string, f func(*claim.NewRow)) claim.NewRow {
		r := claim.NewRow{Job: claim.Job{ID: id, Command: "true", State: claim.Pending, Queue: "default",
			MaxRetries: 3, BackoffBase: 2, CreatedAt: now, UpdatedAt: now, RunAfter: now}}
		if f != nil {
			f(&r)
		}
		return r
	}
	key := func(k string) func(*claim.NewRow) { return func(r *claim.NewRow) { r.Job.UniqueKey = k } }
	ingest := func(k string) func(*claim.NewRow) { return func(r *claim.NewRow) { r.IngestKey = k } }
	after := func(ids ...string) func(*claim.NewRow) { return func(r *claim.NewRow) { r.After = ids } }
	seed := []claim.NewRow{row("old", key("held")), row("old-file", ingest("f1")), row("old-2", nil)}
	plain := func(n int) []claim.NewRow {
		var rows []claim.NewRow
		for i := range n {
			rows = append(rows, row(fmt.Sprintf("p%d", i), nil))
		}
		return rows
	}
	cat := func(parts ...[]claim.NewRow) []claim.NewRow {
		var rows []claim.NewRow
		for _, p := range parts {
			rows = append(rows, p...)
		}
		return rows
	}
	tests := []struct {
		name string
		rows []claim.NewRow
	}{
		{"plain", plain(7)},
		{"skipped by a stored job", cat(plain(3), []claim.NewRow{row("a", key("held"))}, plain(3)[1:])},
		{"skipped by an earlier row", []claim.NewRow{row("a", key("k")), row("b", nil), row("c", key("k")), row("d", key("k")), row("e", nil)}},
		{"duplicate file", []claim.NewRow{row("a", nil), row("b", ingest("f1")), row("c", ingest("f2")), row("d", ingest("f2")), row("e", nil)}},
		{"id taken", []claim.NewRow{row("a", nil), row("old", nil), row("b", nil), row("c", nil), row("d", nil)}},
		// "old-2" is refused for its id; the unique key it asked for is
		// taken by a later row of the same statement, which must not be
		// the explanation.
		{"id taken, key taken after", []claim.NewRow{row("a", nil), row("old-2", key("late")), row("b", nil), row("c", key("late")), row("d", nil)}},
		{"file seen after", []claim.NewRow{row("a", nil), row("old", ingest("f9")), row("b", ingest("f9")), row("c", nil)}},
		{"after", []claim.NewRow{row("a", nil), row("b", after("a", "old")), row("c", after("b")), row("d", nil), row("e", after("old-2"))}},
		// Waits on a job a later row stores: unknown when it was stored.
		{"after a later row", []claim.NewRow{row("a", nil), row("b", after("d")), row("c", nil), row("d", nil), row("e", nil)}},
		{"after an unknown job", []claim.NewRow{row("a", nil), row("b", nil), row("c", after("nope")), row("d", nil)}},
		{"an id twice", []claim.NewRow{row("a", key("k2")), row("a", nil), row("b", nil), row("c", nil)}},
		{"redrive", []claim.NewRow{row("a", nil), row("b", nil), row("old", func(r *claim.NewRow) { r.Redrive = true }), row("c", nil), row("d", nil), row("e", nil), row("f", nil)}},
	}
	for _, tt := range tests {
		for _, each := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/each=%v", tt.name, each), func(t *testing.T) {
				runs, alone := openSeeded(t, seed, now), openSeeded(t, seed, now)
				p := claim.EnqueueParams{Jobs: tt.rows, Each: each, Now: now}
				got, gotErr := runs.Enqueue(t.Context(), p)
				want, wantErr := alone.enqueueOneByOne(t, p)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("Enqueue = %v; one by one: %v", gotErr, wantErr)
				}
				var at *claim.AtError
				if errors.As(wantErr, &at) != errors.As(gotErr, &at) {
					t.Fatalf("Enqueue = %#v; one by one: %#v", gotErr, wantErr)
				}
				if wantErr == nil && !reflect.DeepEqual(results(got), results(want)) {
					t.Errorf("Enqueue:\n%v\none by one:\n%v", results(got), results(want))
				}
				if g, w := tables(t, runs), tables(t, alone); g != w {
					t.Errorf("tables after Enqueue:\n%s\none by one:\n%s", g, w)
				}
			})
		}
	}
}

// openSeeded opens a new store holding the jobs of seed.
func openSeeded(t *testing.T, seed []claim.NewRow, now time.Time) *Engine {
	e, err := Open(filepath.Join(t.TempDir(), "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Enqueue(t.Context(), claim.EnqueueParams{Jobs: seed, Now: now}); err != nil {
		t.Fatal(err)
	}
	return e
}

// results renders rs for comparison: errors by their text.
func results(rs []claim.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s %s seq=%d waiting=%d %v err=%v", r.Outcome, r.Job.ID, r.Job.Seq, r.Job.Waiting, r.Job.WaitingOn, r.Err))
	}
	return out
}

// tables renders the rows enqueue writes.
func tables(t *testing.T, e *Engine) string {
	var out string
	for _, q := range []string{
		"SELECT seq, id, state, ifnull(unique_key, ''), ifnull(ingest_key, ''), waiting FROM jobs ORDER BY seq",
		"SELECT after_id, job_id, met, 0, 0, 0 FROM deps ORDER BY job_id, after_id",
		"SELECT queue, state, n, 0, 0, 0 FROM queue_counts ORDER BY queue, state",
	} {
		rows, err := e.db.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var a, b, c, d, f, g any
			if err := rows.Scan(&a, &b, &c, &d, &f, &g); err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintln(a, b, c, d, f, g)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestRunSizes: a stretch of rows goes in runs of a few sizes only, and
// the engine keeps each size's statement prepared once a transaction has
// used it: a second batch of the same shape prepares nothing in its
// transaction.
func TestRunSizes(t *testing.T) {
	for n, want := range map[int]int{4: 4, 5: 4, 7: 4, 8: 8, 37: 32, 999: 512, 1000: 1000, 1500: 1000} {
		if got := runSize(n); got != want {
			t.Errorf("runSize(%d) = %d, want %d", n, got, want)
		}
	}
	now := time.Unix(1_800_000_000, 0).UTC()
	e := openSeeded(t, nil, now)
	batch := func(from int) claim.EnqueueParams {
		p := claim.EnqueueParams{Now: now}
		for i := range 37 { // runs of 32 and 4, then one alone
			p.Jobs = append(p.Jobs, claim.NewRow{Job: claim.Job{ID: fmt.Sprintf("j%d", from+i), Command: "true",
				State: claim.Pending, Queue: "default", MaxRetries: 3, BackoffBase: 2, CreatedAt: now, UpdatedAt: now, RunAfter: now}})
		}
		return p
	}
	for round, from := range []int{0, 100} {
		var ins *inserter
		err := e.tx(t.Context(), func(tx *sql.Tx) (err error) {
			ins = e.inserter(t.Context(), tx)
			_, err = e.enqueueIn(t.Context(), tx, ins, batch(from))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		ins.closeAfter(t.Context())
		if got := len(ins.runs); got != 2 {
			t.Errorf("round %d: %d run statements, want 2 (32 rows, 4 rows)", round, got)
		}
		if want := []string{insertText(32), insertText(4)}; round == 0 && !reflect.DeepEqual(ins.missed, want) {
			t.Errorf("round 0 prepared %d texts in its transaction, want the two of its runs", len(ins.missed))
		} else if round == 1 && len(ins.missed) != 0 {
			t.Errorf("round 1 prepared %d texts in its transaction, want none: the engine kept them", len(ins.missed))
		}
	}
	var n int
	if err := e.db.QueryRow("SELECT count(*) FROM jobs").Scan(&n); err != nil || n != 74 {
		t.Errorf("%d jobs stored (%v), want 74", n, err)
	}
}

// TestRunsAsOneByOneRandom: batches of random rows, long enough to be split
// into runs of several sizes (conflicting ids, unique keys and spool files
// across the runs' boundaries, dependencies on rows before and after, and
// on a stored job), get what a statement a row gets: the same outcomes, the
// same first refusal, the same tables; each store takes two batches, the
// second through the statements the engine kept.
func TestRunsAsOneByOneRandom(t *testing.T) {
	now := time.Unix(1_800_000_000, 0).UTC()
	seed := []claim.NewRow{
		{Job: claim.Job{ID: "old", UniqueKey: "k0"}, IngestKey: "f0"},
		{Job: claim.Job{ID: "old-2"}},
	}
	row := func(r claim.NewRow) claim.NewRow {
		r.Job.Command, r.Job.State, r.Job.Queue, r.Job.MaxRetries, r.Job.BackoffBase = "true", claim.Pending, "default", 3, 2
		r.Job.CreatedAt, r.Job.UpdatedAt, r.Job.RunAfter = now, now, now
		return r
	}
	for i := range seed {
		seed[i] = row(seed[i])
	}
	rng := rand.New(rand.NewPCG(1, 2)) // fixed: a failure repeats
	batch := func(n int) []claim.NewRow {
		rows := make([]claim.NewRow, n)
		for i := range rows {
			var r claim.NewRow
			r.Job.ID = fmt.Sprintf("j%d", rng.IntN(3*n))
			if rng.IntN(20) == 0 {
				r.Job.ID = "old"
			}
			if rng.IntN(4) == 0 {
				r.Job.UniqueKey = fmt.Sprintf("k%d", rng.IntN(5))
			}
			if rng.IntN(4) == 0 {
				r.IngestKey = fmt.Sprintf("f%d", rng.IntN(5))
			}
			if rng.IntN(6) == 0 {
				r.After = []string{fmt.Sprintf("j%d", rng.IntN(3*n))}
			}
			if rng.IntN(8) == 0 {
				r.After = append(r.After, "old")
			}
			rows[i] = row(r)
		}
		return rows
	}
	for c, n := range []int{5, 9, 13, 23, 37, 70, 130, 300, 5, 9, 13, 23, 37, 70, 130, 300} {
		each := c%2 == 0
		runs, alone := openSeeded(t, seed, now), openSeeded(t, seed, now)
		for round := range 2 {
			p := claim.EnqueueParams{Jobs: batch(n), Each: each, Now: now}
			got, gotErr := runs.Enqueue(t.Context(), p)
			want, wantErr := alone.enqueueOneByOne(t, p)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("case %d (%d rows, each=%v), batch %d: Enqueue: %v; one by one: %v", c, n, each, round, gotErr, wantErr)
			}
			if wantErr == nil && !reflect.DeepEqual(results(got), results(want)) {
				t.Fatalf("case %d (%d rows, each=%v), batch %d:\n%v\none by one:\n%v", c, n, each, round, results(got), results(want))
			}
			if g, w := tables(t, runs), tables(t, alone); g != w {
				t.Fatalf("case %d (%d rows, each=%v), batch %d: tables\n%s\none by one:\n%s", c, n, each, round, g, w)
			}
		}
	}
}

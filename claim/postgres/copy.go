package postgres

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/queuectl/queuectl/claim"
)

// OpenReadOnly connects to the database dsn names for reading only, as the
// source of a copy: every transaction is read-only
// (default_transaction_read_only), and a schema older than this binary's,
// or none, is refused rather than migrated. The caller owns the Engine and
// must Close it.
func OpenReadOnly(ctx context.Context, dsn string) (*Engine, error) {
	e, err := open(ctx, dsn, 0, map[string]string{"default_transaction_read_only": "on"})
	if err != nil {
		return nil, err
	}
	var version int
	err = e.pool.QueryRow(ctx, "SELECT version FROM queuectl_schema").Scan(&version)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == codeUndefinedTable, errors.Is(err, pgx.ErrNoRows):
		err = &hinted{fmt.Errorf("database %s holds no queuectl store", e.location),
			"name the store to copy from with --db (or QUEUECTL_DB); its schema is on the URL's search_path"}
	case err != nil:
		err = classify(fmt.Errorf("read schema version: %w", err))
	case version > len(migrations):
		err = newerSchema(version)
	case version < len(migrations):
		err = &claim.OldSchemaError{Location: e.location, Version: version, Want: len(migrations)}
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Export calls fn with a snapshot of the database: one REPEATABLE READ,
// READ ONLY transaction, which no writer waits for.
func (e *Engine) Export(ctx context.Context, fn func(claim.Snapshot) error) error {
	tx, err := e.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return classify(fmt.Errorf("export: %w", err))
	}
	snap := &snapshot{tx: tx}
	defer func() {
		if snap.rows != nil {
			snap.rows.Close()
		}
		tx.Rollback(context.WithoutCancel(ctx))
	}()
	return classify(fn(snap))
}

// snapshot reads tables in Export's transaction, one at a time: a
// connection reads one result at once.
type snapshot struct {
	tx   pgx.Tx
	rows pgx.Rows
}

// Table streams table's rows in primary key order.
func (s *snapshot) Table(ctx context.Context, table string) ([]string, iter.Seq2[[]any, error], error) {
	order, err := claim.CopyOrder(table)
	if err != nil {
		return nil, nil, err
	}
	if s.rows != nil {
		s.rows.Close()
	}
	rows, err := s.tx.Query(ctx, "SELECT * FROM "+table+" ORDER BY "+order)
	if err != nil {
		return nil, nil, fmt.Errorf("export %s: %w", table, err)
	}
	s.rows = rows
	var cols []string
	for _, f := range rows.FieldDescriptions() {
		cols = append(cols, f.Name)
	}
	return cols, func(yield func([]any, error) bool) {
		defer rows.Close()
		values := func(claim.Scanner) ([]any, error) { return rows.Values() }
		if err := claim.Stream(rows, values, yield); err != nil {
			yield(nil, fmt.Errorf("export %s: %w", table, err))
		}
	}, nil
}

// copiedTables are locked by an import, so that no write (an enqueue, a
// schedule, a config setting from another host) slips in between its
// check that they are empty and its commit.
const copiedTables = "jobs, runs, deps, schedules, queue_limits, paused_queues, config, queue_counts"

// Import copies p.Tables into the database with COPY, in one durable
// transaction, refused by p.Check before any row is written.
func (e *Engine) Import(ctx context.Context, p claim.ImportParams) (map[string]int64, error) {
	counts := map[string]int64{}
	err := e.write(ctx, durable, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "LOCK TABLE "+copiedTables+" IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return fmt.Errorf("import: lock tables: %w", err)
		}
		if err := checkEmpty(ctx, tx, p); err != nil {
			return err
		}
		// Check accepted only default values, which the copy's replace.
		if _, err := tx.Exec(ctx, "DELETE FROM config"); err != nil {
			return fmt.Errorf("import config: %w", err)
		}
		for _, t := range p.Tables {
			n, err := importTable(ctx, tx, p, t)
			if err != nil {
				return err
			}
			counts[t] = n
		}
		return e.afterImport(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	// The planner knows nothing of rows loaded in one transaction until
	// autovacuum analyzes them, up to a minute later, and the claim's plan
	// depends on the jobs table's size: analyze now, as after any bulk
	// load. Its failure costs only that minute, so the copy stands.
	e.pool.Exec(ctx, "ANALYZE jobs, runs, deps")
	return counts, nil
}

// afterImport counts the imported jobs per queue and state (shard 0, as
// foldCounts keeps those of no backend), makes new jobs' seq follow the
// last copied, and wakes the listeners.
func (e *Engine) afterImport(ctx context.Context, tx pgx.Tx) error {
	b := &pgx.Batch{}
	b.Queue("DELETE FROM queue_counts")
	b.Queue(`INSERT INTO queue_counts (queue, state, shard, n)
		SELECT queue, state, 0, count(*) FROM jobs GROUP BY queue, state`)
	b.Queue(`SELECT setval(pg_get_serial_sequence('jobs', 'seq'), coalesce(max(seq), 0) + 1, false) FROM jobs`)
	b.Queue(notifyQuery, e.channel)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("import: count jobs: %w", err)
	}
	return nil
}

// checkEmpty hands p.Check what the tables hold.
func checkEmpty(ctx context.Context, tx pgx.Tx, p claim.ImportParams) error {
	held := map[string]int64{}
	for _, t := range p.Tables {
		if _, err := claim.CopyOrder(t); err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return fmt.Errorf("import: count %s: %w", t, err)
		}
		held[t] = n
	}
	config, err := readConfig(tx.Query(ctx, configQuery))
	if err != nil {
		return fmt.Errorf("import: read config: %w", err)
	}
	return p.Check(held, config)
}

// importTable copies table's rows from p.From with COPY FROM STDIN.
func importTable(ctx context.Context, tx pgx.Tx, p claim.ImportParams, table string) (int64, error) {
	cols, rows, err := p.From.Table(ctx, table)
	if err != nil {
		return 0, err
	}
	types, err := columnTypes(ctx, tx, table)
	if err != nil {
		return 0, err
	}
	bools := make([]bool, len(cols))
	for i, c := range cols {
		t, ok := types[c]
		if !ok {
			return 0, fmt.Errorf("import %s: the source's column %s has no place here: this queuectl's schema lacks it (upgrade queuectl)", table, c)
		}
		bools[i] = t == "boolean"
	}
	next, stop := iter.Pull2(rows)
	defer stop()
	var n int64
	src := pgx.CopyFromFunc(func() ([]any, error) {
		row, err, ok := next()
		if !ok || err != nil {
			return nil, err
		}
		if n++; p.Progress != nil && n%claim.CopyProgressRows == 0 {
			p.Progress(table, n, false)
		}
		return asBools(row, bools), nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, src); err != nil {
		return n, fmt.Errorf("import %s: %w", table, err)
	}
	if p.Progress != nil {
		p.Progress(table, n, true)
	}
	return n, nil
}

// asBools turns the integers that SQLite keeps for booleans into bools
// where the column is boolean here.
func asBools(row []any, bools []bool) []any {
	for i, v := range row {
		if n, ok := v.(int64); ok && bools[i] {
			row[i] = n != 0
		}
	}
	return row
}

// columnTypes maps table's columns to their types.
func columnTypes(ctx context.Context, tx pgx.Tx, table string) (map[string]string, error) {
	rows, err := tx.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1`, table)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", table, err)
	}
	defer rows.Close()
	types, err := claim.CollectStrings(rows)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", table, err)
	}
	return types, nil
}

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"iter"
	"os"
	"strings"

	"github.com/queuectl/queuectl/claim"
)

// OpenReadOnly opens the existing database at path for reading only, as
// the source of a copy: its connections refuse every write (query_only),
// and a schema older than this binary's is refused rather than migrated.
// The caller owns the Engine and must Close it.
func OpenReadOnly(ctx context.Context, path string) (*Engine, error) {
	pin, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	e := &Engine{path: path, pin: pin, readOnly: true}
	if err := e.isDatabase(); err != nil {
		pin.Close()
		return nil, err
	}
	if err := e.connect(); err != nil {
		pin.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	version, err := schemaVersion(e.db.QueryRowContext(ctx, "PRAGMA user_version"))
	if err == nil && version < len(migrations) {
		err = &claim.OldSchemaError{Location: path, Version: version, Want: len(migrations)}
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Export calls fn with a snapshot of the database: one deferred read
// transaction, which takes no lock that writers wait for.
func (e *Engine) Export(ctx context.Context, fn func(claim.Snapshot) error) error {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer conn.Close()
	// The driver begins every transaction IMMEDIATE (the DSN's _txlock),
	// which a read-only database refuses; a plain BEGIN only reads.
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	snap := &snapshot{conn: conn}
	defer func() {
		for _, rows := range snap.open {
			rows.Close()
		}
		conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	}()
	return fn(snap)
}

// snapshot reads tables in Export's transaction.
type snapshot struct {
	conn *sql.Conn
	open []*sql.Rows // closed when Export returns, whether read to the end or not
}

// Table streams table's rows in primary key order.
func (s *snapshot) Table(ctx context.Context, table string) ([]string, iter.Seq2[[]any, error], error) {
	order, err := claim.CopyOrder(table)
	if err != nil {
		return nil, nil, err
	}
	rows, err := s.conn.QueryContext(ctx, "SELECT * FROM "+table+" ORDER BY "+order)
	if err != nil {
		return nil, nil, fmt.Errorf("export %s: %w", table, err)
	}
	s.open = append(s.open, rows)
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, fmt.Errorf("export %s: %w", table, err)
	}
	return cols, func(yield func([]any, error) bool) {
		defer rows.Close()
		scan := func(r claim.Scanner) ([]any, error) {
			row, ptrs := make([]any, len(cols)), make([]any, len(cols))
			for i := range row {
				ptrs[i] = &row[i]
			}
			return row, r.Scan(ptrs...)
		}
		if err := claim.Stream(rows, scan, yield); err != nil {
			yield(nil, fmt.Errorf("export %s: %w", table, err))
		}
	}, nil
}

// Import copies p.Tables into the database in one durable transaction
// (BEGIN IMMEDIATE: other writers wait), refused by p.Check before any
// row is written.
func (e *Engine) Import(ctx context.Context, p claim.ImportParams) (map[string]int64, error) {
	counts := map[string]int64{}
	err := e.tx(ctx, func(tx *sql.Tx) error {
		if err := checkEmpty(ctx, tx, p); err != nil {
			return err
		}
		// Check accepted only default values, which the copy's replace.
		if _, err := tx.ExecContext(ctx, "DELETE FROM config"); err != nil {
			return fmt.Errorf("import config: %w", err)
		}
		for _, t := range p.Tables {
			n, err := importTable(ctx, tx, p, t)
			if err != nil {
				return err
			}
			counts[t] = n
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM queue_counts;
			INSERT INTO queue_counts (queue, state, n) SELECT queue, state, count(*) FROM jobs GROUP BY queue, state`)
		if err != nil {
			return fmt.Errorf("count imported jobs: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.notify()
	return counts, nil
}

// checkEmpty hands p.Check what the tables hold.
func checkEmpty(ctx context.Context, tx *sql.Tx, p claim.ImportParams) error {
	held := map[string]int64{}
	for _, t := range p.Tables {
		if _, err := claim.CopyOrder(t); err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return fmt.Errorf("import: count %s: %w", t, err)
		}
		held[t] = n
	}
	config, err := readConfig(tx.QueryContext(ctx, configQuery))
	if err != nil {
		return fmt.Errorf("import: read config: %w", err)
	}
	return p.Check(held, config)
}

// importTable inserts table's rows from p.From, as they are.
func importTable(ctx context.Context, tx *sql.Tx, p claim.ImportParams, table string) (int64, error) {
	cols, rows, err := p.From.Table(ctx, table)
	if err != nil {
		return 0, err
	}
	q := "INSERT INTO " + table + " (" + quoteColumns(cols) + ") VALUES (?" + strings.Repeat(", ?", len(cols)-1) + ")"
	stmt, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("import %s: %w", table, err)
	}
	defer stmt.Close()
	var n int64
	for row, err := range rows {
		if err != nil {
			return n, err
		}
		if _, err := stmt.ExecContext(ctx, row...); err != nil {
			return n, fmt.Errorf("import %s: %w", table, err)
		}
		if n++; p.Progress != nil && n%claim.CopyProgressRows == 0 {
			p.Progress(table, n, false)
		}
	}
	if p.Progress != nil {
		p.Progress(table, n, true)
	}
	return n, ctx.Err()
}

// quoteColumns lists column names as SQL identifiers.
func quoteColumns(cols []string) string {
	return `"` + strings.Join(cols, `", "`) + `"`
}

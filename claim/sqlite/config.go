package sqlite

import (
	"context"
	"database/sql"

	"github.com/queuectl/queuectl/claim"
)

// ConfigValues reads the stored config.
func (e *Engine) ConfigValues(ctx context.Context) (map[string]string, error) {
	return readConfig(e.query(ctx, nil, configQuery))
}

const configQuery = "SELECT key, value FROM config"

func readConfig(rows *sql.Rows, err error) (map[string]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return claim.CollectStrings(rows)
}

// SetConfig stores one value, durably, once check accepts it with the
// config as stored in the same transaction.
func (e *Engine) SetConfig(ctx context.Context, key, value string, check func(map[string]string) error) error {
	return e.tx(ctx, func(tx *sql.Tx) error {
		stored, err := readConfig(tx.QueryContext(ctx, configQuery))
		if err != nil {
			return err
		}
		if err := check(stored); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO config (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
}

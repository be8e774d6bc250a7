package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/queuectl/queuectl/claim"
)

// ConfigValues reads the stored config.
func (e *Engine) ConfigValues(ctx context.Context) (map[string]string, error) {
	out, err := readConfig(e.pool.Query(ctx, configQuery))
	return out, classify(err)
}

const configQuery = "SELECT key, value FROM config"

func readConfig(rows pgx.Rows, err error) (map[string]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return claim.CollectStrings(rows)
}

// SetConfig stores one value, durably, once check accepts it with the
// config as stored. The table is locked for the transaction, so that two
// settings made at once cannot together make a combination check refuses.
func (e *Engine) SetConfig(ctx context.Context, key, value string, check func(map[string]string) error) error {
	return e.write(ctx, durable, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "LOCK TABLE config IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return fmt.Errorf("lock config: %w", err)
		}
		stored, err := readConfig(tx.Query(ctx, configQuery))
		if err != nil {
			return fmt.Errorf("read config: %w", err)
		}
		if err := check(stored); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO config (key, value) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
		if err != nil {
			return fmt.Errorf("set config %s: %w", key, err)
		}
		return nil
	})
}

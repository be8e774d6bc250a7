package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// TestDurability: a light write runs with synchronous_commit off, for that
// transaction only; a durable one with the server's setting (on).
func TestDurability(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	level := func(d durability) string {
		t.Helper()
		var got string
		err := e.write(ctx, d, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SHOW synchronous_commit").Scan(&got)
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, step := range []struct {
		name string
		d    durability
		want string
	}{{"durable", durable, "on"}, {"light", light, "off"}, {"durable after light", durable, "on"}} {
		if got := level(step.d); got != step.want {
			t.Errorf("synchronous_commit in a %s write = %q, want %q", step.name, got, step.want)
		}
	}
}

// TestLightBatch: the statements of a light batch run with synchronous_commit
// off, in one transaction: the setting ends with it, and an error in a
// later statement takes back an earlier one.
func TestLightBatch(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var in, xact1, xact2 string
	err = e.sendLight(ctx, func(b *pgx.Batch) {
		b.Queue("SHOW synchronous_commit")
		b.Queue("SELECT txid_current()::text")
		b.Queue("SELECT txid_current()::text")
	}, func(br pgx.BatchResults) error {
		for _, v := range []*string{&in, &xact1, &xact2} {
			if err := br.QueryRow().Scan(v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if in != "off" || xact1 != xact2 {
		t.Errorf("in a light batch: synchronous_commit %q, transactions %s and %s; want off, one transaction", in, xact1, xact2)
	}
	var after string
	if err := e.pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != "on" {
		t.Errorf("synchronous_commit after a light batch = %q, want on", after)
	}
	err = e.sendLight(ctx, func(b *pgx.Batch) {
		b.Queue("INSERT INTO config (key, value) VALUES ('batch-test', 'x')")
		b.Queue("SELECT 1/0")
	}, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		_, err := br.Exec()
		return err
	})
	if err == nil {
		t.Fatal("a batch with 1/0 succeeded")
	}
	var n int
	if err := e.pool.QueryRow(ctx, "SELECT count(*) FROM config WHERE key = 'batch-test'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the insert before a failed statement of the batch was kept")
	}
}

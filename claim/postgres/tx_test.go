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

package claim_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// countTo selects the integers 1 to n, in order, on both engines.
const countTo = `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT n FROM c ORDER BY n`

// driverRows runs countTo through each driver the engines use, as the
// engines do: *sql.Rows from modernc's SQLite, pgx.Rows from PostgreSQL.
func driverRows(t *testing.T, test func(t *testing.T, query func() claim.Rows)) {
	t.Run("sqlite", func(t *testing.T) {
		db, err := sql.Open("sqlite", t.TempDir()+"/rows.db")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		test(t, func() claim.Rows {
			rows, err := db.Query(countTo)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rows.Close() })
			return rows
		})
	})
	t.Run("postgres", func(t *testing.T) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, pgtest.Server(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(ctx) })
		var last pgx.Rows
		test(t, func() claim.Rows {
			if last != nil {
				last.Close() // one connection reads one result at a time
			}
			rows, err := conn.Query(ctx, countTo)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(rows.Close)
			last = rows
			return rows
		})
	})
}

func scanInt(r claim.Scanner) (int64, error) { return claim.ScanValue[int64](r) }

func TestCollectReadsEveryRow(t *testing.T) {
	driverRows(t, func(t *testing.T, query func() claim.Rows) {
		got, err := claim.Collect(query(), scanInt)
		if want := []int64{1, 2, 3, 4, 5}; err != nil || !slices.Equal(got, want) {
			t.Fatalf("Collect = %v, %v; want %v, nil", got, err, want)
		}
		none, err := claim.Collect(query(), func(claim.Scanner) (int64, error) { return 0, errStop })
		if !errors.Is(err, errStop) || none != nil {
			t.Fatalf("Collect with a failing scan = %v, %v; want nil, %v", none, err, errStop)
		}
	})
}

var errStop = errors.New("stop")

func TestStreamStopsWhenYieldDoes(t *testing.T) {
	driverRows(t, func(t *testing.T, query func() claim.Rows) {
		var got []int64
		err := claim.Stream(query(), scanInt, func(n int64, err error) bool {
			got = append(got, n)
			return n < 3
		})
		if want := []int64{1, 2, 3}; err != nil || !slices.Equal(got, want) {
			t.Fatalf("Stream yielded %v, returned %v; want %v, nil", got, err, want)
		}
		scan := func(r claim.Scanner) (int64, error) {
			n, err := scanInt(r)
			if n == 2 {
				return 0, errStop
			}
			return n, err
		}
		got = nil
		err = claim.Stream(query(), scan, func(n int64, err error) bool {
			got = append(got, n)
			return true
		})
		if !errors.Is(err, errStop) || !slices.Equal(got, []int64{1}) {
			t.Fatalf("Stream with scan failing at 2 yielded %v, returned %v; want [1], %v", got, err, errStop)
		}
	})
}

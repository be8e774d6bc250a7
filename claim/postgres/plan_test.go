package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// TestClaimPlan: the claim reads each runnable queue's jobs in claim order
// (jobs_queue_runnable) and stops at the first row it can take, rather than
// reading and sorting every runnable job or walking past other queues'
// jobs, in the plan the server keeps for the prepared statement (generic,
// forced here), with and without a queue filter.
func TestClaimPlan(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	e, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	pgtest.Fill(t, dsn, 20000, "true")
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	now := time.Now().UnixNano()
	for name, q := range map[string]string{
		"claim":             claimQuery + fmt.Sprintf("; EXPLAIN EXECUTE claim(%d, 'w', %d, 'h', 1, '/l/')", now, now+1),
		"claim with queues": claimQueuesQuery + fmt.Sprintf("; EXPLAIN EXECUTE claim(%d, 'w', %d, 'h', 1, '/l/', '{default}')", now, now+1),
	} {
		res, err := conn.Conn().PgConn().Exec(ctx, "SET plan_cache_mode = force_generic_plan; PREPARE claim AS "+q+"; DEALLOCATE claim").ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		for _, r := range res {
			for _, row := range r.Rows {
				plan.Write(row[0])
				plan.WriteByte('\n')
			}
		}
		p := plan.String()
		if !strings.Contains(p, "Index Scan using jobs_queue_runnable") || strings.Contains(p, "Seq Scan on jobs") ||
			strings.Contains(p, "jobs_runnable ") || strings.Contains(p, "Sort Key: jobs.") {
			t.Errorf("the %s plan does not read jobs_queue_runnable in order:\n%s", name, p)
		}
	}
}

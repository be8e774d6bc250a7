package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// TestClaimPlan: the claim reads each runnable queue's jobs in claim order
// (jobs_queue_runnable) and stops at the first row it can take, rather than
// reading and sorting every runnable job or walking past other queues'
// jobs, in the plan the server keeps for the prepared statement (generic,
// forced here, as a group's transaction forces it: batch.go), with and
// without a queue filter, for one job and for a group's several.
func TestClaimPlan(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	e := migrated(t, dsn)
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
		"group claim":       claimManyQuery + fmt.Sprintf("; EXPLAIN EXECUTE claim(%d, 'w', %d, 'h', 1, '/l/', 4)", now, now+1),
		"group claim with queues": claimManyQueuesQuery +
			fmt.Sprintf("; EXPLAIN EXECUTE claim(%d, 'w', %d, 'h', 1, '/l/', 4, '{default}')", now, now+1),
	} {
		p := genericPlan(t, conn, "", "claim", q, "")
		if !strings.Contains(p, "Index Scan using jobs_queue_runnable") || strings.Contains(p, "Seq Scan on jobs") ||
			strings.Contains(p, "jobs_runnable ") || strings.Contains(p, "Sort Key: jobs.") {
			t.Errorf("the %s plan does not read jobs_queue_runnable in order:\n%s", name, p)
		}
	}
}

// TestFinishPlan: a finish reaches its job and run by probes of their keys,
// in the generic plan the server keeps for the prepared statement, whether
// that plan was made while the tables were empty and never analyzed (a
// worker's first finishes on a new database, without autovacuum) or once
// they hold many analyzed rows: a lone finish's run by one probe of
// runs_pkey on both of its columns, and the finishes of a group
// (queuectl_finish_many, planned as the function plans it: no sequential
// scans) their jobs through jobs_id_key and their runs through runs_pkey.
// A plan made on empty tables that joined runs or jobs read every row, in
// tables that only grow.
func TestFinishPlan(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	e := migrated(t, dsn)
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	explain := "EXPLAIN EXECUTE finish('completed', 0, true, 0, true, NULL, NULL, 1, 1, 'j', 1, 'w', 'completed', 'c', NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
	explainMany := "EXPLAIN EXECUTE finish_many('{j,k}', '{1,1}', '{w,w}', '{completed,failed}', '{0,0}', '{t,t}', '{0,1}', '{t,t}', " +
		"'{NULL,boom}', '{NULL,2}', '{1,1}', '{1,NULL}', '{completed,failed}', '{NULL,NULL}', '{NULL,NULL}', '{NULL,NULL}', '{NULL,NULL}', '{NULL,NULL}', '{NULL,NULL}', '{NULL,NULL}', 'c')"
	var src string
	if err := conn.QueryRow(ctx, "SELECT prosrc FROM pg_proc WHERE proname = 'queuectl_finish_many' ORDER BY pronargs DESC LIMIT 1").Scan(&src); err != nil {
		t.Fatal(err)
	}
	from, to := strings.Index(src, "RETURN QUERY")+len("RETURN QUERY"), strings.LastIndex(src, ";")
	if from < len("RETURN QUERY") || to < from {
		t.Fatalf("queuectl_finish_many is not RETURN QUERY and one statement:\n%s", src)
	}
	many := src[from:to]
	for _, tables := range []string{"empty", "filled"} {
		if tables == "filled" {
			pgtest.Fill(t, dsn, 20000, "true")
			if _, err := conn.Exec(ctx, `INSERT INTO runs (job_id, attempt, worker_id, host, pid, started_at)
				SELECT id, 1, 'w', 'h', 1, 1 FROM jobs; ANALYZE runs`); err != nil {
				t.Fatal(err)
			}
		}
		p := genericPlan(t, conn, "", "finish", finishQuery, explain)
		if !strings.Contains(p, "Index Scan using runs_pkey on runs") || !strings.Contains(p, "(job_id = $10) AND (attempt = $11)") ||
			strings.Contains(p, "Seq Scan on runs") {
			t.Errorf("with the tables %s, the finish's plan does not probe runs_pkey by the run's key:\n%s", tables, p)
		}
		p = genericPlan(t, conn, "SET enable_seqscan = off", "finish_many", many, explainMany)
		if !strings.Contains(p, "Index Scan using runs_pkey on runs") || !strings.Contains(p, "jobs_id_key") ||
			strings.Contains(p, "Seq Scan on runs") || strings.Contains(p, "Seq Scan on jobs") {
			t.Errorf("with the tables %s, the plan of the group's finishes does not probe jobs and runs by their keys:\n%s", tables, p)
		}
	}
}

// TestSparseKeysIndexedPartially: the indexes of jobs' columns that most
// jobs leave NULL (the spool file's identity, the unique key, the label)
// hold only the rows that have one. A full index takes a NULL entry again
// at every update that moves a job: two of each job's claim and finish.
func TestSparseKeysIndexedPartially(t *testing.T) {
	ctx := context.Background()
	e := migrated(t, pgtest.DSN(t))
	rows, err := e.pool.Query(ctx, "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'jobs' AND schemaname = current_schema()")
	if err != nil {
		t.Fatal(err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Name, Def string }])
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"ingest_key", "unique_key", "label"} {
		seen := false
		for _, d := range defs {
			on := d.Def[strings.Index(d.Def, " USING "):]
			if !strings.Contains(on, "("+col) {
				continue
			}
			seen = true
			if !strings.Contains(on, "WHERE") || !strings.Contains(on, col+" IS NOT NULL") {
				t.Errorf("index %s holds every job, those with no %s too: %s", d.Name, col, d.Def)
			}
		}
		if !seen {
			t.Errorf("no index of jobs on %s; indexes: %v", col, defs)
		}
	}
}

// migrated opens the store at dsn with its schema, closed when t ends.
func migrated(t *testing.T, dsn string) *Engine {
	t.Helper()
	ctx := context.Background()
	e, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return e
}

// genericPlan prepares query as name in the plan the server keeps for it
// (generic, forced), under the settings set (SQL, or ""), and returns what
// explain (the query's own EXPLAIN EXECUTE, or part of query) prints.
func genericPlan(t *testing.T, conn *pgxpool.Conn, set, name, query, explain string) string {
	t.Helper()
	stmts := []string{"SET plan_cache_mode = force_generic_plan", set, "PREPARE " + name + " AS " + query, explain,
		"DEALLOCATE " + name, "RESET ALL"}
	sql := strings.Join(slices.DeleteFunc(stmts, func(s string) bool { return s == "" }), "; ")
	res, err := conn.Conn().PgConn().Exec(context.Background(), sql).ReadAll()
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
	return plan.String()
}

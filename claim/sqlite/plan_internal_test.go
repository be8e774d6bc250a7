package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// The claim and the idle worker's queries read each runnable queue's first
// jobs through jobs_queue_runnable: none of them scans the jobs table, so
// a backlog the claimant may not take (another queue, a paused one, one at
// its limit) never costs it a read, however large.
func TestClaimQueriesNeverScanJobs(t *testing.T) {
	e, err := Open(filepath.Join(t.TempDir(), "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	mine := []string{"only"}
	claimMine, claimMineArgs := claimQuery(claim.ClaimParams{
		Claimant: claim.Claimant{WorkerID: "w", Queues: mine, Lease: time.Minute}, Now: now})
	claimAll, claimAllArgs := claimQuery(claim.ClaimParams{Claimant: claim.Claimant{WorkerID: "w"}, Now: now})
	hasWork, hasWorkArgs := hasWorkQuery(mine, now)
	next, nextArgs := nextRunAfterQuery(nil, now)
	for _, c := range []struct {
		name string
		q    string
		args []any
	}{
		{"claim of one queue", claimMine, claimMineArgs},
		{"claim of every queue", claimAll, claimAllArgs},
		{"has work", hasWork, hasWorkArgs},
		{"next run after", next, nextArgs},
		{"due since (metrics)", dueSinceQuery, []any{now.UnixNano()}},
	} {
		name := c.name
		rows, err := e.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+c.q, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notUsed int
			var detail string
			if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, fmt.Sprint(id, " ", parent, " ", detail))
		}
		rows.Close()
		for _, step := range plan {
			if strings.Contains(step, " SCAN j") && !strings.Contains(step, "jobs_queue_runnable") {
				t.Errorf("%s scans jobs (%q):\n%s", name, step, strings.Join(plan, "\n"))
			}
		}
		if !strings.Contains(strings.Join(plan, "\n"), "jobs_queue_runnable (queue=?)") {
			t.Errorf("%s does not probe jobs_queue_runnable by queue:\n%s", name, strings.Join(plan, "\n"))
		}
	}
}

// A job that ends dead or canceled looks for the jobs waiting on it through
// the deps key and reads only those: never every pending job of the store,
// which a worker did at each dead job, a backlog of 195,000 pending jobs
// making each death cost 146 ms.
func TestEndDependentsReadsJobsByID(t *testing.T) {
	e, err := Open(filepath.Join(t.TempDir(), "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	rows, err := e.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+endDependentsQuery, "err", "a", 1, 1, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notUsed int
		var detail string
		if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(plan, "\n")
	if !strings.Contains(got, "SEARCH jobs USING INDEX sqlite_autoindex_jobs_1 (id=?)") {
		t.Errorf("ending the dependents of a job does not read jobs by id:\n%s", got)
	}
}

// TestGetAllFindsEachJobByID: the read of many jobs by id (wait's look at
// the jobs it waits for) finds each through the id's index: a scan of
// jobs would read the whole store at each look.
func TestGetAllFindsEachJobByID(t *testing.T) {
	e, err := Open(filepath.Join(t.TempDir(), "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	rows, err := e.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+getAllQuery, `["a","b"]`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notUsed int
		var detail string
		if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	found := false
	for _, step := range plan {
		if strings.HasPrefix(step, "SCAN jobs") {
			t.Errorf("GetAll scans jobs: %q", plan)
		}
		found = found || strings.HasPrefix(step, "SEARCH jobs") && strings.Contains(step, "(id=?)")
	}
	if !found {
		t.Errorf("GetAll does not search jobs by id: %q", plan)
	}
}

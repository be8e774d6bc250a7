package claim_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// countJobs counts jobs per state the slow way, for comparing with Counts.
func countJobs(tb testing.TB, path string) map[claim.State]int {
	tb.Helper()
	out := map[claim.State]int{}
	for _, st := range claim.States {
		out[st] = 0
	}
	rows, err := rawDB(tb, path).Query("SELECT state, count(*) FROM jobs GROUP BY state")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			tb.Fatal(err)
		}
		out[claim.State(st)] = n
	}
	return out
}

// countQueues counts jobs per queue and state the slow way, for comparing
// with QueueCounts.
func countQueues(tb testing.TB, path string) map[string]map[claim.State]int {
	tb.Helper()
	out := map[string]map[claim.State]int{}
	rows, err := rawDB(tb, path).Query("SELECT queue, state, count(*) FROM jobs GROUP BY queue, state")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var q, st string
		var n int
		if err := rows.Scan(&q, &st, &n); err != nil {
			tb.Fatal(err)
		}
		if out[q] == nil {
			out[q] = map[claim.State]int{}
		}
		out[q][claim.State(st)] = n
	}
	return out
}

func checkCounts(tb testing.TB, s *claim.Store, step string) {
	tb.Helper()
	got, err := s.Counts(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	if want := countJobs(tb, s.Path()); !maps.Equal(got, want) {
		tb.Errorf("after %s: Counts = %v, want %v", step, got, want)
	}
	byQueue, err := s.QueueCounts(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	if want := countQueues(tb, s.Path()); !reflect.DeepEqual(byQueue, want) {
		tb.Errorf("after %s: QueueCounts = %v, want %v", step, byQueue, want)
	}
}

// TestCountsFollowEveryChange: the counts kept by triggers agree with the
// jobs after every kind of state change.
func TestCountsFollowEveryChange(t *testing.T) {
	ctx := t.Context()
	s, clk := mustOpenClocked(t)
	c := claimant(t, "w")
	checkCounts(t, s, "open")
	for i := range 6 {
		queue := []string{"", "builds"}[i%2] // two queues, counted apart
		mustEnqueue(t, s, claim.NewJob{ID: fmt.Sprintf("j%d", i), Command: "true", MaxRetries: intp(2), Queue: queue})
	}
	checkCounts(t, s, "enqueue")
	j, r := mustClaim(t, s, c)
	checkCounts(t, s, "claim")
	if err := s.Complete(ctx, r); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s, "complete")
	j, r = mustClaim(t, s, c)
	if _, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s, "fail")
	_, r = mustClaim(t, s, c)
	if err := s.Release(ctx, r, "stopped"); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s, "release")
	_, r = mustClaim(t, s, c)
	inflight, err := s.InFlight(ctx)
	if err != nil || len(inflight) != 1 {
		t.Fatalf("InFlight = %v, %v", inflight, err)
	}
	if _, err := s.Recover(ctx, inflight[0]); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s, "recover")
	dead := mustKill(t, s, "doomed")
	checkCounts(t, s, "dead")
	if _, err := s.Retry(ctx, dead.ID); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s, "retry")
	mustKill(t, s, "doomed-again")
	if err := s.Purge(ctx, "doomed-again"); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s, "purge")
	clk.Advance(time.Hour)
	if _, err := s.PurgeFinished(ctx, claim.Completed, clk.Now()); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s, "purge finished")
}

// TestMigrationFromVersion1: a database made by a version-1 binary, with
// jobs in several states, opens with its counts right and version 2.
func TestMigrationFromVersion1(t *testing.T) {
	schema, err := os.ReadFile("schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "queue.db")
	db := rawDB(t, path)
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	for i, st := range []string{"pending", "pending", "processing", "completed", "dead", "completed"} {
		_, err := db.Exec(`INSERT INTO jobs (id, command, state, queue, max_retries, backoff_base,
			run_after, created_at, updated_at) VALUES (?, 'true', ?, ?, 3, 2, 0, 0, 0)`,
			fmt.Sprintf("old-%d", i), st, []string{"default", "builds"}[i%2])
		if err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s := mustOpenPath(t, path)
	if v := userVersion(t, path); v != schemaVersion {
		t.Errorf("user_version after migration = %d, want %d", v, schemaVersion)
	}
	got, err := s.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[claim.State]int{claim.Pending: 2, claim.Processing: 1, claim.Completed: 2, claim.Failed: 0, claim.Dead: 1}
	if !maps.Equal(got, want) {
		t.Errorf("Counts after migration = %v, want %v", got, want)
	}
	checkCounts(t, s, "migration")
	mustEnqueue(t, s, claim.NewJob{ID: "new", Command: "true"})
	checkCounts(t, s, "enqueue after migration")
}

// TestEnqueueResultIsStored: the job Enqueue returns is the job Get reads
// back, field for field.
func TestEnqueueResultIsStored(t *testing.T) {
	s, _ := mustOpenClocked(t)
	timeout := 90 * time.Second
	for _, nj := range []claim.NewJob{
		{Command: "true"},
		{ID: "full", Command: "make", MaxRetries: intp(5), BackoffBase: intp(3), Priority: 7,
			Queue: "builds", Timeout: &timeout, Env: map[string]string{"A": "1"}, Cwd: t.TempDir(),
			UniqueKey: "nightly", IngestKey: "spool:0123"},
		{ID: "later", Command: "true", RunAt: t0.Add(time.Hour)},
		{ID: "delayed", Command: "true", Delay: time.Minute},
	} {
		j := mustEnqueue(t, s, nj)
		if got := mustGet(t, s, j.ID); !reflect.DeepEqual(j, got) {
			t.Errorf("Enqueue(%+v) returned\n%+v\nGet reads\n%+v", nj, j, got)
		}
	}
}

package claim_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func TestEnqueueStoresEveryField(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, _ := db.openClocked(t)
		dir := t.TempDir()
		nj := claim.NewJob{ID: "nightly-db", Command: "pg_dump app", MaxRetries: intp(4),
			BackoffBase: intp(5), Priority: 9, Queue: "db", RunAt: t0.Add(time.Hour),
			Timeout: durp(30 * time.Minute), Env: map[string]string{"PGHOST": "db1"},
			Cwd: dir, Umask: intp(0o027), UniqueKey: "nightly", Label: "db nightly"}
		got := mustEnqueue(t, s, nj)
		if stored := mustGet(t, s, "nightly-db"); !reflect.DeepEqual(stored, got) {
			t.Errorf("Get = %+v, want what Enqueue returned: %+v", stored, got)
		}
		want := claim.Job{Seq: got.Seq, ID: "nightly-db", Command: "pg_dump app", State: claim.Pending,
			MaxRetries: 4, BackoffBase: 5, Priority: 9, Queue: "db", Timeout: 30 * time.Minute,
			Env: map[string]string{"PGHOST": "db1"}, Cwd: dir, Umask: intp(0o027), UniqueKey: "nightly", Label: "db nightly",
			RunAt: t0.Add(time.Hour), RunAfter: t0.Add(time.Hour), CreatedAt: t0, UpdatedAt: t0,
			PendingReason: claim.ReasonScheduled}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Enqueue(%s) = %+v, want %+v", show(nj), got, want)
		}
	})
}

func TestEnqueueDefaultsFromConfig(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		j := mustEnqueue(t, s, claim.NewJob{Command: "true"})
		if j.MaxRetries != 3 || j.BackoffBase != 2 || j.Timeout != 0 || j.Queue != "default" || j.Priority != 0 {
			t.Errorf("Enqueue with stock config = max_retries %d, backoff_base %d, timeout %v, queue %q, priority %d; want 3, 2, 0, default, 0",
				j.MaxRetries, j.BackoffBase, j.Timeout, j.Queue, j.Priority)
		}
		if !j.RunAfter.Equal(t0) || !j.RunAt.IsZero() {
			t.Errorf("Enqueue without run_at: run_after %v, run_at %v; want %v and zero", j.RunAfter, j.RunAt, t0)
		}

		for k, v := range map[string]string{"max-retries": "5", "backoff-base": "3", "job-timeout": "10s"} {
			if _, _, err := s.SetConfig(ctx, k, v); err != nil {
				t.Fatal(err)
			}
		}
		j = mustEnqueue(t, s, claim.NewJob{Command: "true"})
		if j.MaxRetries != 5 || j.BackoffBase != 3 || j.Timeout != 10*time.Second {
			t.Errorf("Enqueue with max-retries 5, backoff-base 3, job-timeout 10s = %d, %d, %v", j.MaxRetries, j.BackoffBase, j.Timeout)
		}
		// Values on the job win over the config, and stay fixed on it.
		j = mustEnqueue(t, s, claim.NewJob{Command: "true", MaxRetries: intp(1), BackoffBase: intp(1), Timeout: durp(0)})
		if _, _, err := s.SetConfig(ctx, "max-retries", "9"); err != nil {
			t.Fatal(err)
		}
		j = mustGet(t, s, j.ID)
		if j.MaxRetries != 1 || j.BackoffBase != 1 || j.Timeout != 0 {
			t.Errorf("Enqueue with explicit values = %d, %d, %v; want 1, 1, 0", j.MaxRetries, j.BackoffBase, j.Timeout)
		}
	})
}

func TestEnqueueDelay(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, _ := db.openClocked(t)
		j := mustEnqueue(t, s, claim.NewJob{Command: "true", Delay: 90 * time.Second})
		if want := t0.Add(90 * time.Second); !j.RunAfter.Equal(want) || !j.RunAt.Equal(want) {
			t.Errorf("Enqueue(delay 90s) run_after %v, run_at %v; want both %v", j.RunAfter, j.RunAt, want)
		}
	})
}

func TestEnqueueGeneratedIDs(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s := db.open(t) // the real clock: ids must sort even within one microsecond
		batch := make([]claim.NewJob, 500)
		for i := range batch {
			batch[i] = claim.NewJob{Command: "true"}
		}
		if _, err := s.EnqueueAll(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
		mustEnqueue(t, s, claim.NewJob{Command: "true"})
		js, err := s.List(t.Context(), claim.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i, j := range js {
			if !claim.ValidID(j.ID) {
				t.Errorf("generated id %q is not a ValidID", j.ID)
			}
			if seen[j.ID] {
				t.Errorf("generated id %q twice", j.ID)
			}
			seen[j.ID] = true
			if i > 0 && js[i-1].ID >= j.ID {
				t.Errorf("generated ids out of enqueue order: %q (seq %d) then %q (seq %d)", js[i-1].ID, js[i-1].Seq, j.ID, j.Seq)
			}
		}
		if want := t0.Format("20060102-150405"); !strings.HasPrefix(claim.NewID(t0), want) {
			t.Errorf("NewID(%v) = %q, want it to start with %q", t0, claim.NewID(t0), want)
		}
	})
}

func TestEnqueueDuplicateID(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		orig := mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "echo one", Priority: 1})
		clk.Advance(time.Minute)
		for _, st := range []string{"pending", "completed"} {
			if st == "completed" {
				_, r := mustClaim(t, s, claimant(t, "w"))
				if _, err := s.Complete(ctx, r); err != nil {
					t.Fatal(err)
				}
				orig = mustGet(t, s, "a")
			}
			_, err := s.Enqueue(ctx, claim.NewJob{ID: "a", Command: "echo two", Priority: 5})
			if !errors.Is(err, claim.ErrConflict) {
				t.Fatalf("Enqueue(id a) while a is %s = %v, want ErrConflict", st, err)
			}
			if !strings.Contains(err.Error(), "exists already") {
				t.Errorf("Enqueue(id a) = %q, want it to say the id exists already", err)
			}
			if got := mustGet(t, s, "a"); !reflect.DeepEqual(got, orig) {
				t.Errorf("after a refused duplicate, job a = %+v, want it untouched: %+v", got, orig)
			}
		}
	})
}

func TestEnqueueUniqueKey(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		c := claimant(t, "w")
		mustEnqueue(t, s, claim.NewJob{ID: "first", Command: "true", UniqueKey: "nightly", MaxRetries: intp(2)})

		skipped := func(when string) {
			t.Helper()
			r, err := s.Enqueue(ctx, claim.NewJob{Command: "true", UniqueKey: "nightly"})
			if err != nil || r.Outcome != claim.Skipped || r.Job.ID != "first" {
				t.Errorf("Enqueue(unique_key nightly) while first is %s = %s %q, %v; want skipped, first, nil",
					when, r.Outcome, r.Job.ID, err)
			}
		}
		created := func(when string) string {
			t.Helper()
			r, err := s.Enqueue(ctx, claim.NewJob{Command: "true", UniqueKey: "nightly"})
			if err != nil || r.Outcome != claim.Created {
				t.Fatalf("Enqueue(unique_key nightly) once the last is %s = %s, %v; want created", when, r.Outcome, err)
			}
			return r.Job.ID
		}

		skipped("pending")
		j, r := mustClaim(t, s, c)
		skipped("processing")
		if _, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); err != nil {
			t.Fatal(err)
		}
		skipped("failed")
		clk.Advance(time.Minute)
		j, r = mustClaim(t, s, c)
		if next, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); next != claim.Dead || err != nil {
			t.Fatalf("second Fail = %s, %v, want dead", next, err)
		}
		second := created("dead")

		_, r = mustClaim(t, s, c)
		if r.JobID != second {
			t.Fatalf("claimed %s, want %s", r.JobID, second)
		}
		if _, err := s.Complete(ctx, r); err != nil {
			t.Fatal(err)
		}
		created("completed")

		// Other keys and no key are not affected.
		mustEnqueue(t, s, claim.NewJob{Command: "true", UniqueKey: "hourly"})
		mustEnqueue(t, s, claim.NewJob{Command: "true"})
		mustEnqueue(t, s, claim.NewJob{Command: "true"})
	})
}

func TestEnqueueIngestKey(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		first := mustEnqueue(t, s, claim.NewJob{Command: "true", IngestKey: "spool/a.json@123"})
		for _, nj := range []claim.NewJob{
			{Command: "true", IngestKey: "spool/a.json@123"},
			{ID: "other", Command: "false", IngestKey: "spool/a.json@123"},
		} {
			r, err := s.Enqueue(ctx, nj)
			if err != nil || r.Outcome != claim.Duplicate || r.Job.ID != first.ID {
				t.Errorf("Enqueue(%s) = %s %q, %v; want duplicate of %q", show(nj), r.Outcome, r.Job.ID, err, first.ID)
			}
		}
		if _, err := s.Get(ctx, "other"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("a duplicate ingest made job other: Get = %v", err)
		}
		mustEnqueue(t, s, claim.NewJob{Command: "true", IngestKey: "spool/b.json@124"})
	})
}

// mustKill makes job id dead after one failed run.
func mustKill(tb testing.TB, s *claim.Store, id string) claim.Job {
	tb.Helper()
	ctx := tb.Context()
	mustEnqueue(tb, s, claim.NewJob{ID: id, Command: "false", MaxRetries: intp(1)})
	c := claimant(tb, "killer")
	c.Queues = []string{"default"}
	for {
		j, r := mustClaim(tb, s, c)
		if j.ID != id {
			if _, err := s.Complete(ctx, r); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		if next, err := s.Fail(ctx, j, r, intp(1), "exit status 1", time.Hour); next != claim.Dead || err != nil {
			tb.Fatalf("Fail(%s) = %s, %v, want dead", id, next, err)
		}
		return mustGet(tb, s, id)
	}
}

func TestEnqueueRedrive(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustKill(t, s, "d")
		clk.Advance(time.Hour)

		r, err := s.Enqueue(ctx, claim.NewJob{ID: "d", Command: "false", Redrive: true, IngestKey: "dead-file"})
		if err != nil || r.Outcome != claim.Redriven {
			t.Fatalf("Enqueue(redrive dead d) = %s, %v; want redriven", r.Outcome, err)
		}
		j := mustGet(t, s, "d")
		if j.State != claim.Pending || j.Attempts != 0 || j.LastError != "" || j.ExitCode != nil || !j.RunAfter.Equal(clk.Now()) {
			t.Errorf("redriven job = state %s, attempts %d, last_error %q, exit_code %v, run_after %v; want pending, 0, none, now",
				j.State, j.Attempts, j.LastError, j.ExitCode, j.RunAfter)
		}
		if !reflect.DeepEqual(r.Job, j) {
			t.Errorf("Enqueue(redrive).Job = %+v, want %+v", r.Job, j)
		}

		// The same dead file seen again (a crash between commit and unlink) is
		// a duplicate, not a second redrive nor a conflict.
		again, err := s.Enqueue(ctx, claim.NewJob{ID: "d", Command: "false", Redrive: true, IngestKey: "dead-file"})
		if err != nil || again.Outcome != claim.Duplicate || again.Job.ID != "d" {
			t.Errorf("Enqueue(redrive d) of the same file again = %s %q, %v; want duplicate of d", again.Outcome, again.Job.ID, err)
		}
		// Now it is pending, not dead: a redrive from another file is a conflict.
		if _, err := s.Enqueue(ctx, claim.NewJob{ID: "d", Command: "false", Redrive: true}); !errors.Is(err, claim.ErrConflict) {
			t.Errorf("Enqueue(redrive pending d) = %v, want ErrConflict", err)
		}
		// A dead file whose job was purged becomes a new job.
		r, err = s.Enqueue(ctx, claim.NewJob{ID: "gone", Command: "true", Redrive: true})
		if err != nil || r.Outcome != claim.Created {
			t.Errorf("Enqueue(redrive unknown id) = %s, %v; want created", r.Outcome, err)
		}
	})
}

// A job's umask is stored as given, 0 (no bits masked) apart from none
// (the worker's), through one insert and through a batch's, and a value
// no umask can take is refused.
func TestEnqueueUmask(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		want := map[string]*int{"none": nil, "zero": intp(0), "private": intp(0o077), "all": intp(0o777)}
		var batch []claim.NewJob
		for id, mask := range want {
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "true", Umask: mask})
			batch = append(batch, claim.NewJob{ID: "batch-" + id, Command: "true", Umask: mask},
				claim.NewJob{ID: "batch2-" + id, Command: "true", Umask: mask})
		}
		rs, err := s.EnqueueAll(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			if got, w := r.Job.Umask, batch[i].Umask; !reflect.DeepEqual(got, w) {
				t.Errorf("EnqueueAll: job %s's umask = %s, want %s", r.Job.ID, claim.UmaskText(got), claim.UmaskText(w))
			}
		}
		for id, mask := range want {
			for _, id := range []string{id, "batch-" + id, "batch2-" + id} {
				if got := mustGet(t, s, id).Umask; !reflect.DeepEqual(got, mask) {
					t.Errorf("Get(%s).Umask = %s, want %s", id, claim.UmaskText(got), claim.UmaskText(mask))
				}
			}
		}
		for _, bad := range []int{-1, 0o1000} {
			if _, err := s.Enqueue(ctx, claim.NewJob{Command: "true", Umask: intp(bad)}); !errors.Is(err, claim.ErrInvalid) {
				t.Errorf("Enqueue(umask %o) = %v, want ErrInvalid", bad, err)
			}
		}
	})
}

func TestEnqueueCwd(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		dir := t.TempDir()
		file := filepath.Join(dir, "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, cwd := range []string{filepath.Join(dir, "missing"), file, "relative/dir"} {
			_, err := s.Enqueue(ctx, claim.NewJob{Command: "true", Cwd: cwd})
			if !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), cwd) {
				t.Errorf("Enqueue(cwd %q) = %v, want ErrInvalid naming the path", cwd, err)
			}
		}
		mustEnqueue(t, s, claim.NewJob{Command: "true", Cwd: dir})
		if js, _ := s.List(ctx, claim.Filter{}); len(js) != 1 {
			t.Errorf("after refused cwds, %d jobs stored, want 1", len(js))
		}
	})
}

func TestEnqueueAllIsAllOrNothing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "taken", Command: "true"})
		tests := []struct {
			name    string
			bad     claim.NewJob
			wantErr error
		}{
			{"invalid", claim.NewJob{Command: ""}, claim.ErrInvalid},
			{"conflict", claim.NewJob{ID: "taken", Command: "true"}, claim.ErrConflict},
			{"missing cwd", claim.NewJob{Command: "true", Cwd: "/no/such/dir"}, claim.ErrInvalid},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				batch := []claim.NewJob{{ID: "x", Command: "true"}, tt.bad, {ID: "y", Command: "true"}}
				rs, err := s.EnqueueAll(ctx, batch)
				if !errors.Is(err, tt.wantErr) || rs != nil {
					t.Fatalf("EnqueueAll(ok, %s, ok) = %v, %v; want nil, %v", tt.name, rs, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "job 2 of 3") {
					t.Errorf("EnqueueAll error %q does not name the refused job", err)
				}
				js, _ := s.List(ctx, claim.Filter{})
				if got := ids(js); got != "taken" {
					t.Errorf("after a refused EnqueueAll, jobs = %q, want only taken", got)
				}
			})
		}
		rs, err := s.EnqueueAll(ctx, []claim.NewJob{{ID: "x", Command: "true"}, {ID: "y", Command: "true"}})
		if err != nil || len(rs) != 2 || rs[0].Job.ID != "x" || rs[1].Job.ID != "y" || rs[1].Outcome != claim.Created {
			t.Errorf("EnqueueAll(x, y) = %+v, %v", rs, err)
		}
	})
}

func TestEnqueueEachIsPartial(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "taken", Command: "true"})
		mustEnqueue(t, s, claim.NewJob{ID: "keyed", Command: "true", UniqueKey: "k"})
		batch := []claim.NewJob{
			{ID: "a", Command: "true"},
			{ID: "bad id/", Command: "true"},
			{ID: "taken", Command: "true"},
			{ID: "b", Command: "true"},
			{ID: "b", Command: "true"}, // taken by the one before, in the same batch
			{Command: "true", UniqueKey: "k"},
			{Command: " "},
			{ID: "c", Command: "true", Cwd: "/no/such/dir"},
			{ID: "d", Command: "true"},
		}
		rs, err := s.EnqueueEach(ctx, batch)
		if err != nil {
			t.Fatalf("EnqueueEach = %v", err)
		}
		want := []struct {
			outcome claim.Outcome
			err     error
		}{
			{claim.Created, nil}, {"", claim.ErrInvalid}, {"", claim.ErrConflict}, {claim.Created, nil},
			{"", claim.ErrConflict}, {claim.Skipped, nil}, {"", claim.ErrInvalid}, {"", claim.ErrInvalid},
			{claim.Created, nil},
		}
		if len(rs) != len(want) {
			t.Fatalf("EnqueueEach returned %d results for %d jobs", len(rs), len(want))
		}
		for i, w := range want {
			if rs[i].Outcome != w.outcome || !errors.Is(rs[i].Err, w.err) || (w.err == nil) != (rs[i].Err == nil) {
				t.Errorf("EnqueueEach result %d (%s) = %s, %v; want %s, %v", i, show(batch[i]), rs[i].Outcome, rs[i].Err, w.outcome, w.err)
			}
		}
		js, _ := s.List(ctx, claim.Filter{})
		if got := ids(js); got != "taken keyed a b d" {
			t.Errorf("after EnqueueEach, jobs = %q, want %q", got, "taken keyed a b d")
		}
		// The savepoints left the connection usable for the next transaction.
		mustEnqueue(t, s, claim.NewJob{ID: "e", Command: "true"})
	})
}

func TestEnqueueEachLargeBatch(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, _ := db.openClocked(t)
		var batch []claim.NewJob
		for i := range 300 {
			nj := claim.NewJob{ID: fmt.Sprintf("job-%03d", i), Command: "true"}
			if i%3 == 0 {
				nj.ID = "" // generated
			}
			if i%7 == 0 {
				nj.Command = ""
			}
			batch = append(batch, nj)
		}
		rs, err := s.EnqueueEach(t.Context(), batch)
		if err != nil {
			t.Fatal(err)
		}
		var stored []string
		for i, r := range rs {
			if (i%7 == 0) != (r.Err != nil) {
				t.Errorf("EnqueueEach result %d = %v", i, r.Err)
			}
			if r.Err == nil {
				stored = append(stored, r.Job.ID)
			}
		}
		js, _ := s.List(t.Context(), claim.Filter{})
		got := strings.Fields(ids(js))
		sort.Strings(got)
		sort.Strings(stored)
		if !reflect.DeepEqual(got, stored) {
			t.Errorf("stored %d jobs, want the %d accepted ones", len(got), len(stored))
		}
	})
}

// A spool file whose job ran and was removed (rm, purge, dlq purge) is a
// Duplicate still: an ingester that died after the commit and before the
// unlink left the file, and the next one to adopt it may come only after
// the job is gone. A refused insert, taken back in its transaction, is
// no job that ran: its file makes the job once the refusal is mended.
func TestGoneIngestKeyIsDuplicate(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		ctx := t.Context()
		mustEnqueue(t, s, claim.NewJob{ID: "removed", Command: "true", IngestKey: "spool:removed"})
		complete(t, s, "removed")
		if err := s.Remove(ctx, "removed"); err != nil {
			t.Fatal(err)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "purged", Command: "true", IngestKey: "spool:purged"})
		complete(t, s, "purged")
		if ids, err := s.PurgeFinished(ctx, claim.Completed, s.Now().Add(time.Hour)); err != nil || len(ids) != 1 {
			t.Fatalf("PurgeFinished = %v, %v; want [purged]", ids, err)
		}
		mustEnqueue(t, s, claim.NewJob{ID: "dead", Command: "false", IngestKey: "spool:dead", MaxRetries: intp(1)})
		if j, r := mustClaim(t, s, claimant(t, "w")); j.ID != "dead" {
			t.Fatalf("claimed %s, want dead", j.ID)
		} else if next, err := s.Fail(ctx, j, r, intp(1), "exit status 1", time.Hour); next != claim.Dead || err != nil {
			t.Fatalf("Fail = %s, %v; want dead", next, err)
		}
		if err := s.Purge(ctx, "dead"); err != nil {
			t.Fatal(err)
		}
		// Refused for an unknown dependency, in a batch that goes on.
		if rs, err := s.EnqueueEach(ctx, []claim.NewJob{{ID: "refused", Command: "true", IngestKey: "spool:refused", After: []string{"nosuch"}}}); err != nil || rs[0].Err == nil {
			t.Fatalf("EnqueueEach with an unknown dependency = %+v, %v; want it refused", rs, err)
		}

		// The files as an ingester finds them taken already (adopted from
		// one that died): the only ones whose key a job can have had.
		rs, err := s.EnqueueEach(ctx, []claim.NewJob{
			{Command: "true", IngestKey: "spool:fresh", IngestAgain: true},
			{ID: "again-removed", Command: "true", IngestKey: "spool:removed", IngestAgain: true},
			{ID: "again-purged", Command: "true", IngestKey: "spool:purged", IngestAgain: true},
			{ID: "again-dead", Command: "true", IngestKey: "spool:dead", IngestAgain: true},
			{ID: "refused", Command: "true", IngestKey: "spool:refused", IngestAgain: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			outcome claim.Outcome
			id      string
		}{{claim.Created, rs[0].Job.ID}, {claim.Duplicate, "removed"}, {claim.Duplicate, "purged"}, {claim.Duplicate, "dead"}, {claim.Created, "refused"}}
		for i, w := range want {
			if rs[i].Err != nil || rs[i].Outcome != w.outcome || rs[i].Job.ID != w.id {
				t.Errorf("row %d: %s %q, %v; want %s %q", i, rs[i].Outcome, rs[i].Job.ID, rs[i].Err, w.outcome, w.id)
			}
		}
		// Alone, as a batch of one whose only row is gone.
		if r, err := s.Enqueue(ctx, claim.NewJob{ID: "alone", Command: "true", IngestKey: "spool:removed", IngestAgain: true}); err != nil ||
			r.Outcome != claim.Duplicate || r.Job.ID != "removed" {
			t.Errorf("Enqueue of a removed job's file alone = %s %q, %v; want duplicate of removed", r.Outcome, r.Job.ID, err)
		}
		for _, id := range []string{"again-removed", "again-purged", "again-dead", "alone"} {
			if _, err := s.Get(ctx, id); !errors.Is(err, claim.ErrNotFound) {
				t.Errorf("the file of a removed job made job %s: Get = %v", id, err)
			}
		}
	})
}

package claim_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// claimOrder claims until ErrNoJob and returns the ids in claim order.
func claimOrder(tb testing.TB, s *claim.Store, c claim.Claimant) []string {
	tb.Helper()
	var out []string
	for {
		j, r, err := s.Claim(tb.Context(), c)
		if errors.Is(err, claim.ErrNoJob) {
			return out
		}
		if err != nil {
			tb.Fatalf("Claim = %v", err)
		}
		if _, err := s.Complete(tb.Context(), r); err != nil {
			tb.Fatalf("Complete(%s) = %v", j.ID, err)
		}
		out = append(out, j.ID)
	}
}

func TestClaimEmpty(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, _ := db.openClocked(t)
		j, r, err := s.Claim(t.Context(), claimant(t, "w"))
		if !errors.Is(err, claim.ErrNoJob) || j.ID != "" || r.JobID != "" {
			t.Errorf("Claim on an empty queue = %q, %q, %v; want ErrNoJob", j.ID, r.JobID, err)
		}
	})
}

func TestClaimOrder(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t)
		c := claimant(t, "w")
		for _, nj := range []claim.NewJob{
			{ID: "low-1", Command: "true"},
			{ID: "high", Command: "true", Priority: 5},
			{ID: "delayed", Command: "true", Delay: 10 * time.Second},
			{ID: "overdue", Command: "true", RunAt: t0.Add(-time.Hour)},
			{ID: "future-high", Command: "true", Priority: 9, RunAt: t0.Add(time.Minute)},
			{ID: "low-2", Command: "true"},
			{ID: "negative", Command: "true", Priority: -1},
		} {
			mustEnqueue(t, s, nj)
			clk.Advance(time.Millisecond)
		}
		got := fmt.Sprint(claimOrder(t, s, c))
		if want := "[high overdue low-1 low-2 negative]"; got != want {
			t.Errorf("claim order now = %s, want %s", got, want)
		}

		// The clock is at t0+7ms; "delayed" was enqueued at t0+2ms, so is due at t0+10.002s.
		clk.Advance(10*time.Second - 6*time.Millisecond)
		if j, _, err := s.Claim(t.Context(), c); !errors.Is(err, claim.ErrNoJob) {
			t.Fatalf("Claim 1ms before delay ends = %q, %v; want ErrNoJob", j.ID, err)
		}
		clk.Advance(time.Millisecond)
		if got := fmt.Sprint(claimOrder(t, s, c)); got != "[delayed]" {
			t.Errorf("claim order once delay ended = %s, want [delayed]", got)
		}
		clk.Advance(time.Minute)
		if got := fmt.Sprint(claimOrder(t, s, c)); got != "[future-high]" {
			t.Errorf("claim order once run_at passed = %s, want [future-high]", got)
		}
	})
}

// TestClaimOrderRunAfterBeforeSeq: among equal priorities, the job due
// earlier runs first even if it was enqueued later.
func TestClaimOrderRunAfterBeforeSeq(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "later", Command: "true", Delay: 5 * time.Second})
		clk.Advance(time.Second)
		mustEnqueue(t, s, claim.NewJob{ID: "sooner", Command: "true"})
		clk.Advance(time.Minute)
		if got := fmt.Sprint(claimOrder(t, s, claimant(t, "w"))); got != "[sooner later]" {
			t.Errorf("claim order = %s, want [sooner later]", got)
		}
	})
}

func TestClaimQueueFilter(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, _ := db.openClocked(t)
		for _, nj := range []claim.NewJob{
			{ID: "d1", Command: "true"},
			{ID: "m1", Command: "true", Queue: "mail"},
			{ID: "b1", Command: "true", Queue: "batch", Priority: 10},
			{ID: "m2", Command: "true", Queue: "mail"},
			{ID: "d2", Command: "true", Queue: "default"},
		} {
			mustEnqueue(t, s, nj)
		}
		tests := []struct {
			queues []string
			want   string
		}{
			{[]string{"nothing-here"}, "[]"},
			{[]string{"mail"}, "[m1 m2]"},
			{[]string{"default", "batch"}, "[b1 d1 d2]"},
			{nil, "[]"},
		}
		for _, tt := range tests {
			c := claimant(t, "w")
			c.Queues = tt.queues
			if got := fmt.Sprint(claimOrder(t, s, c)); got != tt.want {
				t.Errorf("claim order for queues %q = %s, want %s", tt.queues, got, tt.want)
			}
		}
	})
}

func TestClaimRecordsRun(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true"})
		clk.Advance(time.Second)
		c := claimant(t, "w1")
		j, r := mustClaim(t, s, c)
		now := t0.Add(time.Second)
		if j.State != claim.Processing || j.Attempts != 1 || j.Runs != 1 || j.WorkerID != "w1" ||
			!j.LeaseUntil.Equal(now.Add(30*time.Second)) || !j.UpdatedAt.Equal(now) {
			t.Errorf("claimed job = %+v, want processing, attempt 1, run 1, worker w1, lease %v", j, now.Add(30*time.Second))
		}
		want := claim.Run{JobID: "a", Attempt: 1, WorkerID: "w1", Host: "testhost", PID: c.PID, StartedAt: now,
			StdoutPath: filepath.Join(c.LogDir, "a", "1.out"), StderrPath: filepath.Join(c.LogDir, "a", "1.err")}
		if r != want {
			t.Errorf("Claim run = %+v, want %+v", r, want)
		}
		if runs := mustRuns(t, s, "a"); len(runs) != 1 || runs[0] != want {
			t.Errorf("Runs(a) = %+v, want [%+v]", runs, want)
		}
		if err := s.Started(t.Context(), r, 4242); err != nil {
			t.Fatal(err)
		}
		if runs := mustRuns(t, s, "a"); runs[0].PGID != 4242 {
			t.Errorf("after Started(4242), run pgid = %d", runs[0].PGID)
		}
		if _, _, err := s.Claim(t.Context(), claimant(t, "w2")); !errors.Is(err, claim.ErrNoJob) {
			t.Errorf("second Claim of the only job = %v, want ErrNoJob", err)
		}
	})
}

// TestRunLogPaths: the log paths a run records are filepath.Join's of the
// claimant's log directory, however it is spelt.
func TestRunLogPaths(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		for i, dir := range []string{"", "logs", "./logs/", "/", "/var/q/../logs/", "/var/q//logs"} {
			id := fmt.Sprintf("j%d", i)
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "true"})
			c := claimant(t, "w1")
			c.LogDir = dir
			_, r := mustClaim(t, s, c)
			if want := filepath.Join(dir, id, "1.out"); r.StdoutPath != want {
				t.Errorf("LogDir %q: run logs to %s, want %s", dir, r.StdoutPath, want)
			}
			if runs := mustRuns(t, s, id); len(runs) != 1 || runs[0] != r {
				t.Errorf("LogDir %q: Runs(%s) = %+v, want [%+v]", dir, id, runs, r)
			}
		}
	})
}

func TestComplete(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "true"})
		_, r := mustClaim(t, s, claimant(t, "w"))
		clk.Advance(3 * time.Second)
		if _, err := s.Complete(ctx, r); err != nil {
			t.Fatalf("Complete = %v", err)
		}
		j := mustGet(t, s, "a")
		end := t0.Add(3 * time.Second)
		if j.State != claim.Completed || j.ExitCode == nil || *j.ExitCode != 0 || j.WorkerID != "" ||
			!j.LeaseUntil.IsZero() || !j.FinishedAt.Equal(end) || j.Attempts != 1 {
			t.Errorf("completed job = %+v", j)
		}
		runs := mustRuns(t, s, "a")
		if runs[0].Outcome != claim.OutcomeCompleted || runs[0].ExitCode == nil || *runs[0].ExitCode != 0 || !runs[0].EndedAt.Equal(end) {
			t.Errorf("completed run = %+v", runs[0])
		}
		if _, err := s.Complete(ctx, r); !errors.Is(err, claim.ErrLost) {
			t.Errorf("second Complete = %v, want ErrLost", err)
		}
		if _, err := s.Fail(ctx, j, r, intp(1), "late", time.Hour); !errors.Is(err, claim.ErrLost) {
			t.Errorf("Fail after Complete = %v, want ErrLost", err)
		}
		other := r
		other.WorkerID = "someone-else"
		if _, err := s.Complete(ctx, other); !errors.Is(err, claim.ErrLost) {
			t.Errorf("Complete by another worker = %v, want ErrLost", err)
		}
	})
}

func TestFailUntilDead(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "flaky", Command: "exit 3", MaxRetries: intp(3), BackoffBase: intp(2)})
		c := claimant(t, "w")
		wantStates := []claim.State{claim.Failed, claim.Failed, claim.Dead}
		for n, want := range wantStates {
			j, r := mustClaim(t, s, c)
			if j.Attempts != n+1 || r.Attempt != n+1 {
				t.Fatalf("run %d: attempts %d, run attempt %d", n+1, j.Attempts, r.Attempt)
			}
			code := 3 + n
			next, err := s.Fail(ctx, j, r, &code, fmt.Sprintf("exit status %d", code), time.Hour)
			if next != want || err != nil {
				t.Fatalf("Fail on run %d = %s, %v; want %s", n+1, next, err, want)
			}
			got := mustGet(t, s, "flaky")
			if got.State != want || got.LastError != fmt.Sprintf("exit status %d", code) || got.ExitCode == nil || *got.ExitCode != code || got.WorkerID != "" {
				t.Errorf("after run %d: state %s, last_error %q, exit_code %v, worker %q", n+1, got.State, got.LastError, got.ExitCode, got.WorkerID)
			}
			if (want == claim.Dead) != !got.FinishedAt.IsZero() {
				t.Errorf("after run %d (%s): finished_at %v", n+1, want, got.FinishedAt)
			}
			clk.Advance(time.Hour)
		}
		if _, _, err := s.Claim(ctx, c); !errors.Is(err, claim.ErrNoJob) {
			t.Errorf("Claim of a dead job = %v, want ErrNoJob", err)
		}

		runs := mustRuns(t, s, "flaky")
		if len(runs) != 3 {
			t.Fatalf("Runs = %d rows, want 3", len(runs))
		}
		for i, r := range runs {
			n := i + 1
			if r.Attempt != n || r.Outcome != claim.OutcomeFailed || r.ExitCode == nil || *r.ExitCode != 2+n ||
				r.Error != fmt.Sprintf("exit status %d", 2+n) || r.EndedAt.IsZero() || r.WorkerID != "w" ||
				r.StdoutPath != filepath.Join(c.LogDir, "flaky", fmt.Sprintf("%d.out", n)) ||
				r.StderrPath != filepath.Join(c.LogDir, "flaky", fmt.Sprintf("%d.err", n)) {
				t.Errorf("run %d = %+v", n, r)
			}
		}
	})
}

func TestFailWithoutExitCode(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, _ := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "slow", Command: "sleep 100", Timeout: durp(time.Second)})
		j, r := mustClaim(t, s, claimant(t, "w"))
		if _, err := s.Fail(t.Context(), j, r, nil, "timed out after 1s", time.Hour); err != nil {
			t.Fatal(err)
		}
		got := mustGet(t, s, "slow")
		if got.ExitCode != nil || got.LastError != "timed out after 1s" {
			t.Errorf("after a timeout: exit_code %v, last_error %q; want none, timed out after 1s", got.ExitCode, got.LastError)
		}
		if runs := mustRuns(t, s, "slow"); runs[0].ExitCode != nil || runs[0].Error != "timed out after 1s" {
			t.Errorf("timed-out run = %+v", runs[0])
		}
	})
}

// TestBackoffWait: after the n-th failed run a job is not claimable before
// base^n seconds (capped by max-backoff), and is claimable then.
func TestBackoffWait(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "b", Command: "false", MaxRetries: intp(6), BackoffBase: intp(3)})
		c := claimant(t, "w")
		maxBackoff := time.Minute
		for _, wait := range []time.Duration{3 * time.Second, 9 * time.Second, 27 * time.Second, time.Minute, time.Minute} {
			j, r := mustClaim(t, s, c)
			if _, err := s.Fail(ctx, j, r, intp(1), "boom", maxBackoff); err != nil {
				t.Fatal(err)
			}
			if got := mustGet(t, s, "b").RunAfter; !got.Equal(clk.Now().Add(wait)) {
				t.Errorf("after run %d: run_after %v, want now+%v", j.Attempts, got, wait)
			}
			clk.Advance(wait - time.Millisecond)
			if _, _, err := s.Claim(ctx, c); !errors.Is(err, claim.ErrNoJob) {
				t.Fatalf("Claim %v after failed run %d = %v, want ErrNoJob until %v", wait-time.Millisecond, j.Attempts, err, wait)
			}
			clk.Advance(time.Millisecond)
		}
		if j, _ := mustClaim(t, s, c); j.Attempts != 6 {
			t.Errorf("last claim: attempts %d, want 6", j.Attempts)
		}
	})
}

// TestBackoffWaitsDoNotBlockOthers: a job in backoff does not hold up the
// queue behind it.
func TestBackoffWaitsDoNotBlockOthers(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "failing", Command: "false", Priority: 5})
		mustEnqueue(t, s, claim.NewJob{ID: "ok", Command: "true"})
		c := claimant(t, "w")
		j, r := mustClaim(t, s, c)
		if _, err := s.Fail(ctx, j, r, intp(1), "boom", time.Hour); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(claimOrder(t, s, c)); got != "[ok]" {
			t.Errorf("claim order while failing waits = %s, want [ok]", got)
		}
	})
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		base, n int
		max     time.Duration
		want    time.Duration
	}{
		{2, 0, time.Hour, time.Second},
		{2, 1, time.Hour, 2 * time.Second},
		{2, 2, time.Hour, 4 * time.Second},
		{2, 3, time.Hour, 8 * time.Second},
		{2, 12, time.Hour, time.Hour},
		{1, 1000, time.Hour, time.Second},
		{10, 3, time.Hour, 1000 * time.Second},
		{3600, 2, time.Hour, time.Hour},
		{3600, 1000, time.Hour, time.Hour},
		{2, 3, 5 * time.Second, 5 * time.Second},
		{2, 1, 0, 0},
	}
	for _, tt := range tests {
		if got := claim.Backoff(tt.base, tt.n, tt.max); got != tt.want {
			t.Errorf("Backoff(%d, %d, %v) = %v, want %v", tt.base, tt.n, tt.max, got, tt.want)
		}
	}
	// No overflow: for every base a job may have, the wait grows with n and
	// never passes the cap, up to the longest cap config accepts.
	for _, max := range []time.Duration{time.Hour, 100 * 365 * 24 * time.Hour} {
		for base := 1; base <= 3600; base++ {
			prev := time.Duration(0)
			for n := 0; n <= 70; n++ {
				got := claim.Backoff(base, n, max)
				if got < prev || got > max || got <= 0 {
					t.Fatalf("Backoff(%d, %d, %v) = %v after %v for n-1", base, n, max, got, prev)
				}
				prev = got
			}
		}
	}
}

func TestRelease(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		mustEnqueue(t, s, claim.NewJob{ID: "a", Command: "sleep 60"})
		_, r := mustClaim(t, s, claimant(t, "w"))
		clk.Advance(time.Second)
		if err := s.Release(ctx, r, "worker interrupted"); err != nil {
			t.Fatal(err)
		}
		j := mustGet(t, s, "a")
		if j.State != claim.Pending || j.Attempts != 0 || j.Runs != 1 || j.WorkerID != "" || !j.RunAfter.Equal(clk.Now()) {
			t.Errorf("released job = %+v, want pending, attempts 0, runs 1, runnable now", j)
		}
		if runs := mustRuns(t, s, "a"); runs[0].Outcome != claim.OutcomeInterrupted || runs[0].Error != "worker interrupted" {
			t.Errorf("released run = %+v", runs[0])
		}
		if err := s.Release(ctx, r, "again"); !errors.Is(err, claim.ErrLost) {
			t.Errorf("second Release = %v, want ErrLost", err)
		}
		j, r2 := mustClaim(t, s, claimant(t, "w"))
		if j.Attempts != 1 || r2.Attempt != 2 {
			t.Errorf("claim after Release: attempts %d, run %d; want 1, 2", j.Attempts, r2.Attempt)
		}
	})
}

// TestEndRecordsStart: a run that carries its start (process group, when
// its command started, what held it) has it recorded by its end, whichever
// end (CompleteAndClaim, Complete, Fail): a short run's start needs no
// write of its own. A start recorded on its own (Started) is kept by an end
// that carries none.
func TestEndRecordsStart(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		for _, id := range []string{"a", "b", "c", "d"} {
			mustEnqueue(t, s, claim.NewJob{ID: id, Command: "true"})
		}
		c := claimant(t, "w")
		execAt := clk.Now().Add(time.Second)
		carry := func(r claim.Run, pgid int) claim.Run {
			r.PGID, r.ExecAt, r.Confined = pgid, execAt, "cgroup"
			return r
		}
		_, ra := mustClaim(t, s, c)
		_, rb, _, err := s.CompleteAndClaim(ctx, carry(ra, 101), c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Complete(ctx, carry(rb, 102)); err != nil {
			t.Fatal(err)
		}
		j, rc := mustClaim(t, s, c)
		if _, err := s.Fail(ctx, j, carry(rc, 103), intp(1), "exit status 1", time.Hour); err != nil {
			t.Fatal(err)
		}
		_, rd := mustClaim(t, s, c)
		if err := s.Started(ctx, carry(rd, 104), 104); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Complete(ctx, rd); err != nil { // carries no start
			t.Fatal(err)
		}
		for id, pgid := range map[string]int{"a": 101, "b": 102, "c": 103, "d": 104} {
			runs := mustRuns(t, s, id)
			if len(runs) != 1 || runs[0].PGID != pgid || !runs[0].ExecAt.Equal(execAt) || runs[0].Confined != "cgroup" ||
				runs[0].EndedAt.IsZero() {
				t.Errorf("run of %s = %+v, want ended, process group %d, its command started at %v, confined by cgroup",
					id, runs, pgid, execAt)
			}
		}
	})
}

package claim_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// forEachCopy runs f as a subtest per pair of engines (source, target),
// each with new databases: every engine copies into every engine.
func forEachCopy(t *testing.T, f func(t *testing.T, src, dst testDB)) {
	t.Helper()
	for _, from := range testEngines {
		for _, to := range testEngines {
			t.Run(from.name+"-to-"+to.name, func(t *testing.T) {
				f(t, testDB{from.name, from.create(t)}, testDB{to.name, to.create(t)})
			})
		}
	}
}

// populate fills s with a store's whole life: jobs in every state, a retry
// history of several runs, a hook outcome, dependencies met and unmet, a
// job dead by its dependency, a queue limit, a paused queue, schedules
// (one fired, one paused) and config. A job is left processing, as a
// crashed worker leaves it, in the limited queue, which it fills.
func populate(t *testing.T, s *claim.Store, clk *fakeClock) {
	t.Helper()
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must2 := func(_ claim.State, err error) { t.Helper(); must(err) }
	_, _, err := s.SetConfig(ctx, "max-retries", "4")
	must(err)
	_, _, err = s.SetConfig(ctx, "on-dead", "echo dead")
	must(err)
	must(s.SetQueueLimit(ctx, "heavy", 1))
	must(s.Pause(ctx, "frozen"))
	timeout := 90 * time.Second
	for _, nj := range []claim.NewJob{
		{ID: "done", Command: "true", Hooks: claim.Hooks{OnSuccess: "echo ok"}},
		{ID: "flaky", Command: "false", MaxRetries: intp(2), Env: map[string]string{"A": "1"}, Cwd: "/tmp", Umask: intp(0o077)},
		{ID: "retrying", Command: "false", MaxRetries: intp(5), Priority: 3, BackoffBase: intp(100)},
		{ID: "doomed", Command: "false", MaxRetries: intp(1)},
		{ID: "stopped", Command: "sleep 1", Timeout: &timeout},
		{ID: "crashed", Command: "sleep 9", Queue: "heavy", Limits: claim.Limits{Memory: 1 << 29}},
	} {
		mustEnqueue(t, s, nj)
	}
	c := claimant(t, "w1")
	step := func(want string, end func(j claim.Job, r claim.Run)) {
		t.Helper()
		j, r := mustClaim(t, s, c)
		if j.ID != want {
			t.Fatalf("populate: claimed %s, want %s", j.ID, want)
		}
		must(s.Started(ctx, r, 4242))
		clk.Advance(time.Second)
		end(j, r)
		clk.Advance(time.Second)
	}
	fail := func(j claim.Job, r claim.Run) {
		// Output that is not text, and more than the tail keeps.
		r.Tails = &claim.Tails{Stderr: claim.Tail{Data: []byte("\x00\xff\xfe" + j.ID), Size: 1 << 20}}
		_, err := s.Fail(ctx, j, r, intp(1), "exit status 1", time.Hour)
		must(err)
	}
	step("retrying", fail) // priority 3 first; back after its backoff
	step("done", func(_ claim.Job, r claim.Run) {
		r.Tails = &claim.Tails{Stdout: claim.Tail{Data: []byte("hello\n"), Size: 6}}
		must2(s.Complete(ctx, r))
		must(s.HookDone(ctx, r, "on_success ok"))
	})
	step("flaky", fail)
	step("doomed", func(j claim.Job, r claim.Run) {
		fail(j, r)
		must(s.HookDone(ctx, r, "on_dead failed: exit status 2"))
	})
	_, _, _, err = s.Cancel(ctx, "stopped")
	must(err)
	if j, _ := mustClaim(t, s, c); j.ID != "crashed" { // left processing by a worker that is gone
		t.Fatalf("populate: claimed %s, want crashed", j.ID)
	}
	clk.Advance(2 * time.Minute)
	step("retrying", fail)
	step("flaky", fail) // dead after two runs

	for _, nj := range []claim.NewJob{
		{ID: "first", Command: "true", Queue: "chain"},
		{ID: "second", Command: "true", Queue: "chain", After: []string{"first", "done"}},
		{ID: "orphan", Command: "true", After: []string{"retrying"}},
		{ID: "later", Command: "true", Delay: time.Hour, UniqueKey: "nightly"},
		{ID: "urgent", Command: "true", Priority: 9},
		{ID: "cold", Command: "true", Queue: "frozen"},
		{ID: "queued-heavy", Command: "true", Queue: "heavy"},
		{ID: "plain", Command: "true"},
	} {
		mustEnqueue(t, s, nj)
	}
	// orphan's dependency dies: orphan is dead by it.
	j, r := mustClaim(t, s, claimant(t, "w2")) // urgent
	must2(s.Complete(ctx, r))
	_ = j
	clk.Advance(time.Hour)
	for {
		j, r = mustClaim(t, s, c)
		if j.ID == "retrying" {
			break
		}
		must2(s.Complete(ctx, r))
	}
	_, err = s.Fail(ctx, j, r, intp(7), "exit status 7", time.Hour)
	must(err)
	j = mustGet(t, s, "retrying")
	for j.State != claim.Dead {
		clk.Advance(time.Hour)
		j, r = mustClaim(t, s, c)
		if j.ID != "retrying" {
			t.Fatalf("populate: claimed %s, want retrying", j.ID)
		}
		_, err = s.Fail(ctx, j, r, intp(7), "exit status 7", time.Hour)
		must(err)
		j = mustGet(t, s, "retrying")
	}
	_, err = s.EndDependents(ctx, "retrying", claim.Dead)
	must(err)
	for _, nj := range []claim.NewJob{
		{ID: "waits", Command: "true", After: []string{"plain2"}},
	} {
		mustEnqueue(t, s, claim.NewJob{ID: "plain2", Command: "true", Priority: 1})
		mustEnqueue(t, s, nj)
	}
	_, err = s.AddSchedule(ctx, claim.NewSchedule{Name: "tick", Cron: "*/5 * * * *", Job: claim.NewJob{Command: "date"}})
	must(err)
	_, err = s.AddSchedule(ctx, claim.NewSchedule{Name: "nap", Cron: "@daily", TZ: "Europe/Paris", Job: claim.NewJob{Command: "true", Queue: "heavy"}})
	must(err)
	_, _, err = s.PauseSchedule(ctx, "nap", true)
	must(err)
	mustEnqueue(t, s, claim.NewJob{ID: "again", Command: "false", Priority: 20, BackoffBase: intp(100)})
	step("again", fail) // failed, waiting for its next run
	clk.Advance(10 * time.Minute)
	if _, _, err := s.FireDue(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
}

// storeView is everything the public Store API shows of a store.
type storeView struct {
	Jobs, Newest []claim.Job
	Runs         map[string][]claim.Run
	Counts       map[string]map[claim.State]int
	Config       []claim.ConfigValue
	Queues       []claim.Queue
	Paused       []string
	Schedules    []claim.Schedule
	InFlight     []claim.InFlight
}

func viewOf(t *testing.T, s *claim.Store) storeView {
	t.Helper()
	ctx := t.Context()
	var v storeView
	var err error
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	v.Jobs, err = s.List(ctx, claim.Filter{})
	check("List", err)
	v.Newest, err = s.List(ctx, claim.Filter{Newest: true, Limit: 5})
	check("List newest", err)
	v.Runs = map[string][]claim.Run{}
	for _, j := range v.Jobs {
		v.Runs[j.ID], err = s.RunsWithTails(ctx, j.ID)
		check("RunsWithTails", err)
	}
	v.Counts, err = s.QueueCounts(ctx)
	check("QueueCounts", err)
	v.Config, err = s.ConfigValues(ctx)
	check("ConfigValues", err)
	v.Queues, err = s.Queues(ctx)
	check("Queues", err)
	v.Paused, err = s.Paused(ctx)
	check("Paused", err)
	v.Schedules, err = s.Schedules(ctx)
	check("Schedules", err)
	v.InFlight, err = s.InFlight(ctx)
	check("InFlight", err)
	return v
}

// compareViews reports every field that differs, job by job and run by run.
func compareViews(t *testing.T, got, want storeView) {
	t.Helper()
	if len(got.Jobs) != len(want.Jobs) {
		t.Fatalf("copy has %d jobs, source %d", len(got.Jobs), len(want.Jobs))
	}
	for i := range want.Jobs {
		if !reflect.DeepEqual(got.Jobs[i], want.Jobs[i]) {
			t.Errorf("job %d:\n got %+v\nwant %+v", i, got.Jobs[i], want.Jobs[i])
		}
	}
	for id, runs := range want.Runs {
		if !reflect.DeepEqual(got.Runs[id], runs) {
			t.Errorf("runs of %s:\n got %+v\nwant %+v", id, got.Runs[id], runs)
		}
	}
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range gv.NumField() {
		name := gv.Type().Field(i).Name
		if name == "Jobs" || name == "Runs" {
			continue
		}
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, gv.Field(i).Interface(), wv.Field(i).Interface())
		}
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestCopyTo(t *testing.T) {
	forEachCopy(t, func(t *testing.T, src, dst testDB) {
		ctx := t.Context()
		s, clk := src.openClocked(t)
		populate(t, s, clk)
		want := viewOf(t, s)
		s.Close()
		var sum [32]byte
		if src.engine == claim.EngineSQLite {
			sum = fileSum(t, src.location)
		}

		from, err := claim.OpenReadOnly(src.location)
		if err != nil {
			t.Fatalf("OpenReadOnly(%s) = %v", src.location, err)
		}
		defer from.Close()
		to := dst.open(t)
		var done []string
		counts, err := from.CopyTo(ctx, to, func(table string, rows int64, end bool) {
			if end {
				done = append(done, fmt.Sprintf("%s %d", table, rows))
			}
		})
		if err != nil {
			t.Fatalf("CopyTo = %v", err)
		}
		wantCounts := map[string]int64{"jobs": int64(len(want.Jobs)), "deps": 4, "schedules": 2, "queue_limits": 1, "paused_queues": 1, "config": 2}
		for _, runs := range want.Runs {
			wantCounts["runs"] += int64(len(runs))
		}
		if !reflect.DeepEqual(counts, wantCounts) {
			t.Errorf("CopyTo counts = %v, want %v", counts, wantCounts)
		}
		if len(done) != len(claim.CopyTables) {
			t.Errorf("progress ends = %v, want one per table of %v", done, claim.CopyTables)
		}
		from.Close()
		if src.engine == claim.EngineSQLite && fileSum(t, src.location) != sum {
			t.Errorf("the source file changed in the copy")
		}

		compareViews(t, viewOf(t, to), want)
		for _, st := range []claim.State{claim.Pending, claim.Processing, claim.Completed, claim.Failed, claim.Dead, claim.Canceled} {
			if want.Counts == nil || countOf(want.Counts, st) == 0 {
				t.Errorf("the populated store has no %s job: the test covers less than it says", st)
			}
		}
		if r := want.Runs["flaky"]; len(r) != 2 || r[1].Tails == nil || len(r[1].Tails.Stderr.Data) == 0 {
			t.Errorf("flaky's runs = %+v, want two, with output kept: the test covers less than it says", r)
		}
		sameClaims(t, src, dst, clk.Now())
	})
}

func countOf(counts map[string]map[claim.State]int, st claim.State) int {
	n := 0
	for _, q := range counts {
		n += q[st]
	}
	return n
}

// sameClaims claims every runnable job on the source and on its copy, at
// the same times, and wants the same jobs in the same order, with the same
// run numbers; then a new job on the copy comes after every copied one.
func sameClaims(t *testing.T, src, dst testDB, now time.Time) {
	t.Helper()
	ctx := t.Context()
	a, b := src.open(t), dst.open(t)
	clk := &fakeClock{now: now}
	a.Now, b.Now = clk.Now, clk.Now
	c := claimant(t, "after-copy")
	for i := 0; ; i++ {
		ja, ra, errA := a.Claim(ctx, c)
		jb, rb, errB := b.Claim(ctx, c)
		if errors.Is(errA, claim.ErrNoJob) && errors.Is(errB, claim.ErrNoJob) {
			if i < 3 {
				t.Errorf("only %d claims after the copy: the test covers less than it says", i)
			}
			break
		}
		if errA != nil || errB != nil || ja.ID != jb.ID || ra.Attempt != rb.Attempt {
			t.Fatalf("claim %d: source %s#%d (%v), copy %s#%d (%v)", i, ja.ID, ra.Attempt, errA, jb.ID, rb.Attempt, errB)
		}
		_, errA = a.Complete(ctx, ra)
		_, errB = b.Complete(ctx, rb)
		if err := firstOf(errA, errB); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour)
	}
	jobs, err := b.List(ctx, claim.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	last := slices.MaxFunc(jobs, func(x, y claim.Job) int { return int(x.Seq - y.Seq) })
	if j := mustEnqueue(t, b, claim.NewJob{ID: "new", Command: "true"}); j.Seq <= last.Seq {
		t.Errorf("new job's seq = %d, want after the last copied (%d)", j.Seq, last.Seq)
	}
}

func firstOf(errs ...error) error { return errors.Join(errs...) }

// TestCopyRefusesNonEmpty: a target holding a job, or a setting of its
// own, is refused and left as it was; one holding only default settings is
// taken.
func TestCopyRefusesNonEmpty(t *testing.T) {
	forEachCopy(t, func(t *testing.T, src, dst testDB) {
		ctx := t.Context()
		s, clk := src.openClocked(t)
		populate(t, s, clk)
		s.Close()
		from, err := claim.OpenReadOnly(src.location)
		if err != nil {
			t.Fatal(err)
		}
		defer from.Close()
		to := dst.open(t)

		mustEnqueue(t, to, claim.NewJob{ID: "mine", Command: "true"})
		before := viewOf(t, to)
		_, err = from.CopyTo(ctx, to, nil)
		var ne *claim.NotEmptyError
		if !errors.As(err, &ne) || !slices.Equal(ne.Holds, []string{"1 job"}) {
			t.Fatalf("CopyTo(target with a job) = %v, want NotEmptyError holding 1 job", err)
		}
		compareViews(t, viewOf(t, to), before)
		if err := to.Remove(ctx, "mine"); err == nil {
			t.Fatal("Remove(pending job) succeeded; want it refused")
		}
		if _, _, _, err := to.Cancel(ctx, "mine"); err != nil {
			t.Fatal(err)
		}
		if err := to.Remove(ctx, "mine"); err != nil {
			t.Fatal(err)
		}

		for _, kv := range [][2]string{{"lease", "30s"}, {"poll-interval", "2s"}} {
			if _, _, err := to.SetConfig(ctx, kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		_, err = from.CopyTo(ctx, to, nil)
		if !errors.As(err, &ne) || !slices.Equal(ne.Holds, []string{"config poll-interval=2s"}) {
			t.Fatalf("CopyTo(target with a setting) = %v, want NotEmptyError holding config poll-interval=2s", err)
		}
		if _, _, err := to.SetConfig(ctx, "poll-interval", "1s"); err != nil {
			t.Fatal(err)
		}
		if _, err := from.CopyTo(ctx, to, nil); err != nil {
			t.Fatalf("CopyTo(target with default settings) = %v", err)
		}
	})
}

// TestCopyAllOrNothing: a copy that fails half way (here: cancelled once
// the jobs are in) leaves the target empty, and a second copy then takes.
func TestCopyAllOrNothing(t *testing.T) {
	forEachCopy(t, func(t *testing.T, src, dst testDB) {
		s, clk := src.openClocked(t)
		populate(t, s, clk)
		want := viewOf(t, s)
		s.Close()
		from, err := claim.OpenReadOnly(src.location)
		if err != nil {
			t.Fatal(err)
		}
		defer from.Close()
		to := dst.open(t)
		empty := viewOf(t, to)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		_, err = from.CopyTo(ctx, to, func(table string, _ int64, end bool) {
			if table == "jobs" && end {
				cancel()
			}
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("CopyTo(cancelled after the jobs) = %v, want context.Canceled", err)
		}
		compareViews(t, viewOf(t, to), empty)
		if _, err := from.CopyTo(t.Context(), to, nil); err != nil {
			t.Fatalf("CopyTo after a failed copy = %v", err)
		}
		compareViews(t, viewOf(t, to), want)
	})
}

// TestOpenReadOnly: nothing to read is an error, not a new database.
func TestOpenReadOnly(t *testing.T) {
	path := t.TempDir() + "/none.db"
	if s, err := claim.OpenReadOnly(path); err == nil {
		s.Close()
		t.Fatalf("OpenReadOnly(%s) = nil error, want one", path)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenReadOnly made %s (stat: %v)", path, err)
	}
}

// BenchmarkCopy measures CopyTo from a SQLite store of copyBenchJobs jobs,
// each completed with one run, into a new store of each engine: the rows
// (jobs and runs) per second of a home moving up.
func BenchmarkCopy(b *testing.B) {
	const jobs = copyBenchJobs
	src := b.TempDir() + "/queue.db"
	s := mustOpenPath(b, src)
	for i := 0; i < jobs; i += 1000 {
		batch := make([]claim.NewJob, min(1000, jobs-i))
		for k := range batch {
			batch[k] = claim.NewJob{Command: "echo " + fmt.Sprint(i+k), Queue: []string{"default", "mail", "heavy"}[k%3]}
		}
		if _, err := s.EnqueueAll(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
	}
	c := claimant(b, "bench")
	_, r, err := s.Claim(b.Context(), c)
	for err == nil {
		r.Tails = &claim.Tails{Stdout: claim.Tail{Data: []byte("done\n"), Size: 5}}
		_, r, _, err = s.CompleteAndClaim(b.Context(), r, c)
	}
	if !errors.Is(err, claim.ErrNoJob) {
		b.Fatal(err)
	}
	s.Close()
	from, err := claim.OpenReadOnly(src)
	if err != nil {
		b.Fatal(err)
	}
	defer from.Close()
	for _, e := range testEngines {
		b.Run("to-"+e.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				to := mustOpenPath(b, e.create(b))
				b.StartTimer()
				counts, err := from.CopyTo(b.Context(), to, nil)
				if err != nil {
					b.Fatal(err)
				}
				if counts["jobs"] != jobs || counts["runs"] != jobs {
					b.Fatalf("copied %v, want %d jobs and runs", counts, jobs)
				}
			}
			b.ReportMetric(float64(2*jobs*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// copyBenchJobs is the size of BenchmarkCopy's store.
const copyBenchJobs = 100_000

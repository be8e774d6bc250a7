package claim_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/testenv"
)

func mustAddSchedule(tb testing.TB, s *claim.Store, name, cron, command string) claim.Schedule {
	tb.Helper()
	sc, err := s.AddSchedule(context.Background(), claim.NewSchedule{Name: name, Cron: cron, TZ: "UTC",
		Job: claim.NewJob{Command: command}})
	if err != nil {
		tb.Fatalf("AddSchedule(%s, %q) = %v", name, cron, err)
	}
	return sc
}

func mustFire(tb testing.TB, s *claim.Store) []claim.Fired {
	tb.Helper()
	fired, _, err := s.FireDue(context.Background())
	if err != nil {
		tb.Fatalf("FireDue = %v", err)
	}
	return fired
}

func TestScheduleFiresOncePerDueTime(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t) // t0 is 03:00 UTC
		sc := mustAddSchedule(t, s, "tick", "*/5 * * * *", "echo tick")
		if want := t0.Add(5 * time.Minute); !sc.NextDue.Equal(want) {
			t.Fatalf("NextDue = %v, want %v", sc.NextDue, want)
		}
		if fired := mustFire(t, s); len(fired) != 0 {
			t.Fatalf("FireDue before the due time = %+v, want nothing", fired)
		}
		clk.Advance(5 * time.Minute)
		fired := mustFire(t, s)
		if len(fired) != 1 || fired[0].Outcome != claim.Created || fired[0].Job.UniqueKey != "schedule:tick" ||
			!strings.HasPrefix(fired[0].Job.ID, "tick-20261121-030500-") || fired[0].Job.Command != "echo tick" {
			t.Fatalf("FireDue at the due time = %+v, want one job tick-20261121-030500-… with unique_key schedule:tick", fired)
		}
		if env := fired[0].Job.Env; env["QUEUECTL_SCHEDULE"] != "tick" || env["QUEUECTL_DUE"] != "2026-11-21T03:05:00Z" {
			t.Errorf("job env = %v, want QUEUECTL_SCHEDULE=tick QUEUECTL_DUE=2026-11-21T03:05:00Z", env)
		}
		if again := mustFire(t, s); len(again) != 0 {
			t.Errorf("FireDue again at the same time = %+v, want nothing", again)
		}

		// Its job is still pending: the next due time is a skip, not a second run.
		clk.Advance(5 * time.Minute)
		skip := mustFire(t, s)
		if len(skip) != 1 || skip[0].Outcome != claim.Skipped || skip[0].Job.ID != fired[0].Job.ID {
			t.Errorf("FireDue while the last run is pending = %+v, want Skipped naming %s", skip, fired[0].Job.ID)
		}

		// Done, then an hour with no worker: the 12 missed due times run once.
		_, r := mustClaim(t, s, claimant(t, "w"))
		if _, err := s.Complete(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour + 2*time.Minute)
		late := mustFire(t, s)
		if len(late) != 1 || late[0].Outcome != claim.Created {
			t.Fatalf("FireDue after an hour without workers = %+v, want one job", late)
		}
		list, err := s.Schedules(t.Context())
		if err != nil || len(list) != 1 {
			t.Fatalf("Schedules = %+v, %v", list, err)
		}
		if want := t0.Add(time.Hour + 15*time.Minute); !list[0].NextDue.Equal(want) {
			t.Errorf("after a missed hour NextDue = %v, want %v (the first due time after now)", list[0].NextDue, want)
		}
		if list[0].LastJob != late[0].Job.ID || list[0].LastState != claim.Pending {
			t.Errorf("Schedules()[0] last job = %s (%s), want %s (pending)", list[0].LastJob, list[0].LastState, late[0].Job.ID)
		}
	})
}

func TestSchedulePauseResumeRemove(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t)
		ctx := t.Context()
		mustAddSchedule(t, s, "hourly", "@hourly", "true")
		if _, err := s.AddSchedule(ctx, claim.NewSchedule{Name: "hourly", Cron: "@daily", Job: claim.NewJob{Command: "x"}}); !errors.Is(err, claim.ErrConflict) {
			t.Errorf("AddSchedule of a taken name = %v, want ErrConflict", err)
		}
		if _, changed, err := s.PauseSchedule(ctx, "hourly", true); err != nil || !changed {
			t.Fatalf("PauseSchedule(hourly) = changed %v, %v; want changed", changed, err)
		}
		if _, changed, err := s.PauseSchedule(ctx, "hourly", true); err != nil || changed {
			t.Errorf("PauseSchedule(hourly) of a paused schedule = changed %v, %v; want unchanged", changed, err)
		}
		clk.Advance(3 * time.Hour)
		if fired := mustFire(t, s); len(fired) != 0 {
			t.Errorf("a paused schedule fired: %+v", fired)
		}
		sc, _, err := s.PauseSchedule(ctx, "hourly", false)
		if err != nil {
			t.Fatal(err)
		}
		if want := t0.Add(4 * time.Hour); !sc.NextDue.Equal(want) {
			t.Errorf("resumed NextDue = %v, want %v: what fell due while paused does not run", sc.NextDue, want)
		}
		if _, changed, err := s.PauseSchedule(ctx, "hourly", false); err != nil || changed {
			t.Errorf("PauseSchedule(hourly, false) of a schedule not paused = changed %v, %v; want unchanged", changed, err)
		}
		if err := s.RemoveSchedule(ctx, "hourly"); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveSchedule(ctx, "hourly"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("RemoveSchedule of a removed schedule = %v, want ErrNotFound", err)
		}
		if _, _, err := s.PauseSchedule(ctx, "nope", true); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("PauseSchedule(nope) = %v, want ErrNotFound", err)
		}
	})
}

func TestScheduleRefusesBadInput(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		one := time.Minute
		for _, ns := range []claim.NewSchedule{
			{Name: "bad name", Cron: "@daily", Job: claim.NewJob{Command: "true"}},
			{Name: "x", Cron: "0 25 * * *", Job: claim.NewJob{Command: "true"}},
			{Name: "x", Cron: "0 0 30 2 *", Job: claim.NewJob{Command: "true"}},
			{Name: "x", Cron: "@daily", TZ: "Nowhere/Special", Job: claim.NewJob{Command: "true"}},
			{Name: "x", Cron: "@daily", Job: claim.NewJob{Command: ""}},
			{Name: "x", Cron: "@daily", Job: claim.NewJob{Command: "true", ID: "fixed"}},
			{Name: "x", Cron: "@daily", Job: claim.NewJob{Command: "true", UniqueKey: "k"}},
			{Name: "x", Cron: "@daily", Job: claim.NewJob{Command: "true", Delay: one}},
			{Name: "x", Cron: "@daily", Job: claim.NewJob{Command: "true", After: []string{"a"}}},
			// A cwd that is no directory would make no job at any due time.
			{Name: "x", Cron: "@daily", Job: claim.NewJob{Command: "true", Cwd: filepath.Join(t.TempDir(), "nosuch")}},
		} {
			if _, err := s.AddSchedule(t.Context(), ns); !errors.Is(err, claim.ErrInvalid) {
				t.Errorf("AddSchedule(%+v) = %v, want ErrInvalid", ns, err)
			}
		}
	})
}

// TestScheduleCwdGoneMakesAJob: a schedule whose cwd was removed after it
// was added still makes a job at its due time, whose run then fails
// saying so (and retries, dies, runs on_dead) as any job's would; a due
// time that passed without a job was told only in the worker's log, and
// schedule list kept showing the last job that ran.
func TestScheduleCwdGoneMakesAJob(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t)
		dir := filepath.Join(t.TempDir(), "work")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddSchedule(t.Context(), claim.NewSchedule{Name: "in-dir", Cron: "*/5 * * * *", TZ: "UTC",
			Job: claim.NewJob{Command: "pwd", Cwd: dir}}); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(dir); err != nil {
			t.Fatal(err)
		}
		clk.Advance(5 * time.Minute)
		fired := mustFire(t, s)
		if len(fired) != 1 || fired[0].Err != nil || fired[0].Outcome != claim.Created || fired[0].Job.Cwd != dir {
			t.Fatalf("FireDue with the cwd gone = %+v, want one job created in %s", fired, dir)
		}
	})
}

func TestParseScheduleFile(t *testing.T) {
	ns, err := claim.ParseScheduleFile("nightly-db", []byte(`{"cron": "0 3 * * *", "tz": "Europe/Berlin",
		"command": "pg_dump app", "timeout": "1h", "max_retries": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	if ns.Name != "nightly-db" || ns.Cron != "0 3 * * *" || ns.TZ != "Europe/Berlin" || ns.Job.Command != "pg_dump app" ||
		*ns.Job.Timeout != time.Hour || *ns.Job.MaxRetries != 2 || !ns.File {
		t.Errorf("ParseScheduleFile = %+v", ns)
	}
	for _, bad := range []string{
		`{"command": "true"}`,
		`{"cron": "@daily"}`,
		`{"cron": "@daily", "command": "true", "comand": "x"}`,
		`{"cron": "@daily", "cron": "@hourly", "command": "true"}`,
		`{"cron": 5, "command": "true"}`,
		`{"cron": "@daily", "command": "true", "id": "x"}`,
		`{"cron": "@daily", "command": "true"} {}`,
		`[1]`,
	} {
		if _, err := claim.ParseScheduleFile("x", []byte(bad)); !errors.Is(err, claim.ErrInvalid) {
			t.Errorf("ParseScheduleFile(%s) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestSyncFileSchedules(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t)
		ctx := t.Context()
		mustAddSchedule(t, s, "by-hand", "@daily", "true")
		def := func(name, cron, command string) claim.NewSchedule {
			return claim.NewSchedule{Name: name, Cron: cron, TZ: "UTC", Job: claim.NewJob{Command: command}, File: true}
		}
		refused, err := s.SyncFileSchedules(ctx, []claim.NewSchedule{def("a", "@hourly", "true"), def("by-hand", "@hourly", "x")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(refused["by-hand"], claim.ErrConflict) || len(refused) != 1 {
			t.Errorf("refused = %v, want by-hand refused (ErrConflict)", refused)
		}
		clk.Advance(30 * time.Minute)
		// A changed command keeps the due time; a changed cron is due from now.
		if _, err := s.SyncFileSchedules(ctx, []claim.NewSchedule{def("a", "@hourly", "echo changed")}, nil); err != nil {
			t.Fatal(err)
		}
		list, _ := s.Schedules(ctx)
		if len(list) != 2 || list[0].Name != "a" || !list[0].NextDue.Equal(t0.Add(time.Hour)) || !strings.Contains(list[0].Spec, "changed") {
			t.Fatalf("after a changed command: %+v", list)
		}
		if err := s.RemoveSchedule(ctx, "a"); !errors.Is(err, claim.ErrConflict) {
			t.Errorf("RemoveSchedule of a file's schedule = %v, want ErrConflict", err)
		}
		if _, err := s.SyncFileSchedules(ctx, nil, []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if list, _ = s.Schedules(ctx); len(list) != 2 {
			t.Errorf("a file being written lost its schedule: %+v", list)
		}
		if _, err := s.SyncFileSchedules(ctx, nil, nil); err != nil {
			t.Fatal(err)
		}
		list, _ = s.Schedules(ctx)
		if len(list) != 1 || list[0].Name != "by-hand" {
			t.Errorf("after its file went, schedules = %+v, want only by-hand", list)
		}
	})
}

// scheduleHelperEnv names the database a schedule helper process fires on.
const scheduleHelperEnv = "QUEUECTL_SCHEDULE_TEST_HELPER_DB"

// TestScheduleHelperProcess fires schedules from another OS process: for
// each time in its argument list, 4 goroutines (each its own Store) call
// FireDue with the clock at that time, and it prints what fired.
func TestScheduleHelperProcess(t *testing.T) {
	location := os.Getenv(scheduleHelperEnv)
	if location == "" {
		t.Skip("fires schedules for TestScheduleFiresOnceAcrossProcesses")
	}
	var times []time.Time
	for _, f := range strings.Fields(os.Getenv(scheduleHelperEnv + "_TIMES")) {
		n, _ := strconv.ParseInt(f, 10, 64)
		times = append(times, time.Unix(0, n).UTC())
	}
	if _, err := io.ReadFull(os.Stdin, make([]byte, 1)); err != nil {
		t.Fatalf("wait for start: %v", err)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for range 4 {
		s := mustOpenPath(t, location)
		wg.Go(func() {
			for _, now := range times {
				s.Now = func() time.Time { return now }
				fired, _, err := s.FireDue(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, f := range fired {
					fmt.Fprintf(out, "fired %s %d %s %s\n", f.Schedule, f.Due.UnixNano(), f.Outcome, f.Job.ID)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	out.Flush()
}

// TestScheduleFiresOnceAcrossProcesses: 3 processes of 4 Stores each fire
// two schedules through the same 10 due times; each due time becomes
// exactly one fire, and each created job exists once.
func TestScheduleFiresOnceAcrossProcesses(t *testing.T) {
	if os.Getenv(scheduleHelperEnv) != "" {
		t.Skip("inside a helper process")
	}
	forEachEngine(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		s.Now = func() time.Time { return t0 }
		mustAddSchedule(t, s, "every-minute", "* * * * *", "true")
		mustAddSchedule(t, s, "every-other", "*/2 * * * *", "true")
		var times []string
		for i := 1; i <= 10; i++ {
			times = append(times, strconv.FormatInt(t0.Add(time.Duration(i)*time.Minute).UnixNano(), 10))
		}
		type proc struct {
			cmd            *exec.Cmd
			stdin          io.WriteCloser
			stdout, stderr bytes.Buffer
		}
		ps := make([]*proc, 3)
		for i := range ps {
			p := &proc{cmd: exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestScheduleHelperProcess$", "-test.count=1")}
			p.cmd.Env = append(os.Environ(), scheduleHelperEnv+"="+db.location, scheduleHelperEnv+"_TIMES="+strings.Join(times, " "))
			p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
			var err error
			if p.stdin, err = p.cmd.StdinPipe(); err != nil {
				t.Fatal(err)
			}
			if err := p.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ps[i] = p
		}
		for _, p := range ps {
			p.stdin.Write([]byte{'g'})
			p.stdin.Close()
		}
		perDue := map[string]int{}
		created := map[string]int{}
		for i, p := range ps {
			if err := p.cmd.Wait(); err != nil {
				t.Fatalf("process %d: %v\n%s\n%s", i, err, p.stdout.String(), p.stderr.String())
			}
			for _, line := range strings.Split(p.stdout.String(), "\n") {
				f := strings.Fields(line)
				if len(f) == 5 && f[0] == "fired" {
					perDue[f[1]+"@"+f[2]]++
					if f[3] == string(claim.Created) {
						created[f[4]]++
					}
				}
			}
		}
		// every-minute fires at each of the 10 times, every-other at 5.
		if len(perDue) != 15 {
			t.Errorf("%d due times fired, want 15: %v", len(perDue), perDue)
		}
		for due, n := range perDue {
			if n != 1 {
				t.Errorf("due time %s fired %d times, want once", due, n)
			}
		}
		jobs, err := s.List(t.Context(), claim.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != len(created) {
			t.Errorf("%d jobs stored, %d created fires reported", len(jobs), len(created))
		}
	})
}

// zoneHelperEnv names the database into which TestScheduleZoneHelperProcess
// adds a schedule in a time zone its ZONEINFO has and its parent's lacks.
const zoneHelperEnv = "QUEUECTL_ZONE_TEST_HELPER_DB"

// TestScheduleZoneHelperProcess adds schedule "a-elsewhere" in the time
// zone Test/Elsewhere, as a host whose time zone data has it would.
func TestScheduleZoneHelperProcess(t *testing.T) {
	location := os.Getenv(zoneHelperEnv)
	if location == "" {
		t.Skip("adds a schedule for TestFireDueGoesOnPastAnUnreadableSchedule")
	}
	s := mustOpenPath(t, location)
	s.Now = func() time.Time { return t0 }
	if _, err := s.AddSchedule(t.Context(), claim.NewSchedule{Name: "a-elsewhere", Cron: "* * * * *",
		TZ: "Test/Elsewhere", Job: claim.NewJob{Command: "true"}}); err != nil {
		t.Fatal(err)
	}
}

// TestFireDueGoesOnPastAnUnreadableSchedule: a schedule added on a host
// whose time zone data knows its zone, fired where it is unknown, makes no
// job and is named in the error, and the schedules after it fire all the
// same.
func TestFireDueGoesOnPastAnUnreadableSchedule(t *testing.T) {
	if os.Getenv(zoneHelperEnv) != "" {
		t.Skip("inside a helper process")
	}
	utc, err := os.ReadFile("/usr/share/zoneinfo/UTC")
	if err != nil {
		testenv.Missing(t, "no time zone data: %v (apt-get install tzdata)", err)
	}
	if _, err := time.LoadLocation("Test/Elsewhere"); err == nil {
		t.Skip("this process knows the zone Test/Elsewhere")
	}
	zoneinfo := t.TempDir()
	if err := os.MkdirAll(zoneinfo+"/Test", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zoneinfo+"/Test/Elsewhere", utc, 0o644); err != nil {
		t.Fatal(err)
	}
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t)
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestScheduleZoneHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), zoneHelperEnv+"="+db.location, "ZONEINFO="+zoneinfo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		mustAddSchedule(t, s, "z-here", "* * * * *", "true")
		clk.Advance(time.Minute)
		fired, next, err := s.FireDue(t.Context())
		if !errors.Is(err, claim.ErrInvalid) || !strings.Contains(fmt.Sprint(err), "schedule a-elsewhere makes no jobs") {
			t.Errorf("FireDue error = %v, want ErrInvalid naming a-elsewhere", err)
		}
		if len(fired) != 1 || fired[0].Schedule != "z-here" || fired[0].Outcome != claim.Created {
			t.Errorf("FireDue fired %+v, want z-here's job created", fired)
		}
		if want := t0.Add(2 * time.Minute); !next.Equal(want) {
			t.Errorf("FireDue next = %v, want %v", next, want)
		}
	})
}

// scheduleReadHook runs afterRead once, right after the Store read the
// schedules: what another process does between a sync's read and its
// write.
type scheduleReadHook struct {
	claim.Engine
	afterRead func()
}

func (h *scheduleReadHook) Schedules(ctx context.Context) ([]claim.Schedule, error) {
	l, err := h.Engine.Schedules(ctx)
	if f := h.afterRead; f != nil {
		h.afterRead = nil
		f()
	}
	return l, err
}

// A schedules/NAME.json whose command is edited while its due time fires:
// the sync read the schedule before the fire, and must not write back the
// next due time it read, which would fire the same due time a second time
// once the first job is done.
func TestFileEditWhileDueFiresOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		firer, fclk := db.openClocked(t)
		e, err := claim.OpenEngine(db.location)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		h := &scheduleReadHook{Engine: e}
		syncer := claim.New(h)
		sclk := &fakeClock{now: t0}
		syncer.Now = sclk.Now
		def := func(cmd string) []claim.NewSchedule {
			return []claim.NewSchedule{{Name: "nightly", Cron: "0 3 * * *", TZ: "UTC", File: true, Job: claim.NewJob{Command: cmd}}}
		}
		if _, err := syncer.SyncFileSchedules(ctx, def("echo v1"), nil); err != nil {
			t.Fatal(err)
		}
		due := mustSchedule(t, firer, "nightly").NextDue
		fclk.Advance(due.Sub(t0))
		sclk.Advance(due.Sub(t0))
		var first []claim.Fired
		h.afterRead = func() {
			first = mustFire(t, firer)
			if len(first) == 1 && first[0].Outcome == claim.Created {
				complete(t, firer, first[0].Job.ID) // a short job, done already
			}
		}
		if _, err := syncer.SyncFileSchedules(ctx, def("echo v2"), nil); err != nil {
			t.Fatal(err)
		}
		if len(first) != 1 || first[0].Outcome != claim.Created {
			t.Fatalf("the fire between the sync's read and write = %+v, want one job", first)
		}
		if sc := mustSchedule(t, firer, "nightly"); !sc.NextDue.After(first[0].Due) || !strings.Contains(sc.Spec, "echo v2") {
			t.Errorf("after the sync: next due %v (fired %v), spec %s; want the next day's, and the edit", sc.NextDue, first[0].Due, sc.Spec)
		}
		fclk.Advance(time.Second)
		for _, f := range mustFire(t, firer) {
			t.Errorf("due time %v fired again: job %s, %s (first: %s)", f.Due, f.Job.ID, f.Outcome, first[0].Job.ID)
		}
	})
}

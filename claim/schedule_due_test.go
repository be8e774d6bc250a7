package claim_test

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// execIn runs one statement on db's tables directly, as a release that
// wrote them otherwise would have.
func execIn(t *testing.T, db testDB, stmt string) {
	t.Helper()
	if db.engine == claim.EnginePostgres {
		pgtest.ExecIn(t, db.location, stmt)
		return
	}
	raw, err := sql.Open("sqlite", db.location)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func mustSchedule(t *testing.T, s *claim.Store, name string) claim.Schedule {
	t.Helper()
	list, err := s.Schedules(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range list {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no schedule %s in %+v", name, list)
	return claim.Schedule{}
}

// TestScheduleDueOfAnOldRuleIsCorrected: a schedule stored by a release
// that read "0 3 */2 * 5" as odd days or Fridays (its next due time the
// 23rd, a Monday) fires by today's reading only: odd-numbered Fridays, the
// 27th.
func TestScheduleDueOfAnOldRuleIsCorrected(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t) // t0 is Saturday 2026-11-21 03:00 UTC
		sc := mustAddSchedule(t, s, "odd-fridays", "0 3 */2 * 5", "true")
		want := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
		if !sc.NextDue.Equal(want) {
			t.Fatalf("NextDue = %v, want %v", sc.NextDue, want)
		}
		old := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
		execIn(t, db, fmt.Sprintf("UPDATE schedules SET next_due = %d, due_checked = %s WHERE name = 'odd-fridays'",
			old.UnixNano(), map[string]string{claim.EngineSQLite: "0", claim.EnginePostgres: "false"}[db.engine]))

		clk.Advance(old.Sub(t0))
		if fired := mustFire(t, s); len(fired) != 0 {
			t.Errorf("FireDue at the old rule's due time (a Monday) = %+v, want nothing", fired)
		}
		if got := mustSchedule(t, s, "odd-fridays").NextDue; !got.Equal(want) {
			t.Errorf("NextDue after a worker read it = %v, want %v", got, want)
		}
		clk.Advance(want.Sub(old))
		if fired := mustFire(t, s); len(fired) != 1 || fired[0].Outcome != claim.Created {
			t.Errorf("FireDue on Friday the 27th = %+v, want one job", fired)
		}
	})
}

const adderHelperEnv = "QUEUECTL_ADDER_TEST_HELPER_DB"

// TestScheduleAdderHelperProcess adds schedule "nightly" (0 3 * * *, no
// time zone) at t0 in a local time zone 5 hours east of its parent's.
func TestScheduleAdderHelperProcess(t *testing.T) {
	location := os.Getenv(adderHelperEnv)
	if location == "" {
		t.Skip("adds a schedule for TestScheduleWithoutZoneIsTheWorkers")
	}
	_, parent := t0.In(time.Local).Zone()
	if v, err := fmt.Sscan(os.Getenv(adderHelperEnv+"_OFFSET"), &parent); v != 1 {
		t.Fatal(err)
	}
	time.Local = time.FixedZone("adder", parent+5*3600)
	s := mustOpenPath(t, location)
	s.Now = func() time.Time { return t0.In(time.Local) } // as time.Now() gives it
	if _, err := s.AddSchedule(t.Context(), claim.NewSchedule{Name: "nightly", Cron: "0 3 * * *",
		Job: claim.NewJob{Command: "true"}}); err != nil {
		t.Fatal(err)
	}
}

// TestScheduleWithoutZoneIsTheWorkers: a schedule added without a time
// zone by a process in another zone is due at 03:00 of the worker's local
// time, its first due time too, not at the adder's 03:00.
func TestScheduleWithoutZoneIsTheWorkers(t *testing.T) {
	if os.Getenv(adderHelperEnv) != "" {
		t.Skip("inside a helper process")
	}
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t)
		_, offset := t0.In(time.Local).Zone()
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestScheduleAdderHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), adderHelperEnv+"="+db.location, fmt.Sprintf("%s_OFFSET=%d", adderHelperEnv, offset))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		c, err := claim.ParseCron("0 3 * * *", "")
		if err != nil {
			t.Fatal(err)
		}
		want := c.Next(t0) // 03:00 here
		adders := mustSchedule(t, s, "nightly").NextDue
		if !adders.Before(want) {
			t.Fatalf("the adder's NextDue %v is not before the worker's %v: the helper's zone was not east", adders, want)
		}

		clk.Advance(adders.Sub(t0))
		if fired := mustFire(t, s); len(fired) != 0 {
			t.Errorf("FireDue at 03:00 of the adder's zone (%v) = %+v, want nothing", adders, fired)
		}
		if got := mustSchedule(t, s, "nightly").NextDue; !got.Equal(want) {
			t.Errorf("NextDue after a worker read it = %v, want %v (03:00 of the worker's zone)", got, want)
		}
		clk.Advance(want.Sub(adders))
		if fired := mustFire(t, s); len(fired) != 1 || fired[0].Outcome != claim.Created {
			t.Errorf("FireDue at 03:00 of the worker's zone = %+v, want one job", fired)
		}
		if got := mustSchedule(t, s, "nightly").NextDue; !got.Equal(want.AddDate(0, 0, 1)) {
			t.Errorf("NextDue after the first job = %v, want %v", got, want.AddDate(0, 0, 1))
		}
	})
}

// TestScheduleListSaysWhatWasSkipped: a due time that finds the last job
// still live, and due times missed while no worker ran, are recorded with
// their reason.
func TestScheduleListSaysWhatWasSkipped(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s, clk := db.openClocked(t)
		mustAddSchedule(t, s, "tick", "*/5 * * * *", "true")
		if sc := mustSchedule(t, s, "tick"); !sc.LastSkipped.IsZero() || sc.SkipReason != "" {
			t.Errorf("a new schedule's last skip = %v %q, want none", sc.LastSkipped, sc.SkipReason)
		}
		clk.Advance(5 * time.Minute)
		mustFire(t, s)
		clk.Advance(5 * time.Minute) // the job of 03:05 is still pending
		mustFire(t, s)
		sc := mustSchedule(t, s, "tick")
		if want := t0.Add(10 * time.Minute); !sc.LastSkipped.Equal(want) || sc.SkipReason != claim.SkipOverlap {
			t.Errorf("after an overlap: last skipped %v (%q), want %v (%q)", sc.LastSkipped, sc.SkipReason, want, claim.SkipOverlap)
		}

		_, r := mustClaim(t, s, claimant(t, "w"))
		if _, err := s.Complete(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour + 2*time.Minute) // no worker from 03:15 to 04:12
		if late := mustFire(t, s); len(late) != 1 || late[0].Outcome != claim.Created || !late[0].Due.Equal(t0.Add(15*time.Minute)) {
			t.Fatalf("FireDue after an hour without workers = %+v, want one job for 03:15", late)
		}
		sc = mustSchedule(t, s, "tick")
		if want := t0.Add(time.Hour + 10*time.Minute); !sc.LastSkipped.Equal(want) || sc.SkipReason != claim.SkipMissed {
			t.Errorf("after an hour without workers: last skipped %v (%q), want %v (%q)", sc.LastSkipped, sc.SkipReason, want, claim.SkipMissed)
		}
	})
}

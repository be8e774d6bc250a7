package claim_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/testenv"
)

func TestCronNextAcrossDST(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		testenv.Missing(t, "no time zone data: %v (apt-get install tzdata)", err)
	}
	at := func(month, day, hour, min int) time.Time {
		return time.Date(2026, time.Month(month), day, hour, min, 0, 0, berlin)
	}
	utc := func(month, day, hour, min int) time.Time {
		return time.Date(2026, time.Month(month), day, hour, min, 0, 0, time.UTC)
	}
	tests := []struct {
		expr  string
		from  time.Time
		wants []time.Time // in UTC
	}{
		// Spring forward, 29 March 02:00 CET -> 03:00 CEST: a fixed time in
		// the gap runs at the change, then as usual.
		{"30 2 * * *", at(3, 28, 23, 0), []time.Time{utc(3, 29, 1, 0), utc(3, 30, 0, 30)}},
		// A wildcard hour follows real time: nothing made up.
		{"30 * * * *", at(3, 29, 1, 0), []time.Time{utc(3, 29, 0, 30), utc(3, 29, 1, 30)}},
		// Fall back, 25 October 03:00 CEST -> 02:00 CET: a fixed time in the
		// repeated hour runs once.
		{"30 2 * * *", at(10, 24, 23, 0), []time.Time{utc(10, 25, 0, 30), utc(10, 26, 1, 30)}},
		// A wildcard hour runs the repeated hour again.
		{"0 * * * *", at(10, 25, 1, 30), []time.Time{utc(10, 25, 0, 0), utc(10, 25, 1, 0), utc(10, 25, 2, 0)}},
		{"@daily", at(3, 28, 12, 0), []time.Time{utc(3, 28, 23, 0), utc(3, 29, 22, 0)}},
		{"*/20 * * * *", at(6, 1, 12, 5), []time.Time{utc(6, 1, 10, 20), utc(6, 1, 10, 40)}},
		// A step over a wildcard (*/2) is a wildcard to cron too, though
		// robfig/cron marks only a bare * as one: every other hour follows
		// real time, and nothing is made up at the change.
		{"0 */2 * * *", at(3, 28, 23, 30), []time.Time{utc(3, 28, 23, 0), utc(3, 29, 2, 0)}},
		{"0 */2 * * *", at(10, 24, 23, 30), []time.Time{utc(10, 24, 22, 0), utc(10, 25, 0, 0), utc(10, 25, 1, 0), utc(10, 25, 3, 0)}},
		{"*/30 2 * * *", at(3, 28, 23, 0), []time.Time{utc(3, 30, 0, 0), utc(3, 30, 0, 30)}},
	}
	for _, tt := range tests {
		c, err := claim.ParseCron(tt.expr, "Europe/Berlin")
		if err != nil {
			t.Fatal(err)
		}
		from := tt.from
		for i, want := range tt.wants {
			got := c.Next(from)
			if !got.Equal(want) {
				t.Errorf("%q: due time %d after %v = %v, want %v", tt.expr, i+1, tt.from, got.UTC(), want)
				break
			}
			from = got
		}
	}
}

// TestCronSundaySeven: crontab(5) takes 7 for Sunday, as 0, in the
// day-of-week field, alone and in ranges, lists and steps; a cron line
// pasted from a crontab means the same days here.
func TestCronSundaySeven(t *testing.T) {
	from := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // a Monday
	for _, tt := range []struct{ expr, same string }{
		{"0 3 * * 7", "0 3 * * 0"},
		{"0 3 * * 5-7", "0 3 * * 0,5,6"},
		{"0 3 * * 0-7", "0 3 * * *"},
		{"0 3 * * 1,7", "0 3 * * 0,1"},
		{"0 3 * * 1-7/2", "0 3 * * 1,3,5,0"},
		{"0 3 * * 7/2", "0 3 * * 0"},
		{"0 3 * * sun", "0 3 * * 0"},
		{"0 3 1 * 7", "0 3 1 * 0"}, // day of month or Sunday
	} {
		c, err := claim.ParseCron(tt.expr, "UTC")
		if err != nil {
			t.Errorf("ParseCron(%q) = %v, want the days of %q", tt.expr, err, tt.same)
			continue
		}
		want, err := claim.ParseCron(tt.same, "UTC")
		if err != nil {
			t.Fatal(err)
		}
		if c.Expr != tt.expr {
			t.Errorf("ParseCron(%q).Expr = %q, want it as written", tt.expr, c.Expr)
		}
		at, wantAt := from, from
		for range 10 {
			at, wantAt = c.Next(at), want.Next(wantAt)
			if !at.Equal(wantAt) {
				t.Errorf("%q: due at %v, want %v as %q", tt.expr, at, wantAt, tt.same)
				break
			}
		}
	}
}

// TestCronDayFields: with both day fields restricted, cron runs on a day
// either matches; a field that begins with * (*/2 too) restricts nothing
// of the other's: the day must match both, as crontab(5) reads it.
func TestCronDayFields(t *testing.T) {
	day := func(year, month, day int) time.Time {
		return time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	}
	from := day(2026, 11, 30) // a Monday
	for _, tt := range []struct {
		expr  string
		wants []time.Time
	}{
		// the 1st, or a Monday
		{"0 0 1 * 1", []time.Time{day(2026, 12, 1), day(2026, 12, 7), day(2026, 12, 14)}},
		// an odd day that is a Monday
		{"0 0 */2 * 1", []time.Time{day(2026, 12, 7), day(2026, 12, 21), day(2027, 1, 11)}},
		// a 1st that is a Sunday, Tuesday, Thursday or Saturday
		{"0 0 1 * */2", []time.Time{day(2026, 12, 1), day(2027, 4, 1), day(2027, 5, 1)}},
	} {
		c, err := claim.ParseCron(tt.expr, "UTC")
		if err != nil {
			t.Fatal(err)
		}
		at := from
		for i, want := range tt.wants {
			if at = c.Next(at); !at.Equal(want) {
				t.Errorf("%q: due time %d after %v = %v, want %v", tt.expr, i+1, from, at, want)
				break
			}
		}
	}
}

func TestParseCronErrors(t *testing.T) {
	for _, tt := range []struct{ expr, tz string }{
		{"61 * * * *", ""}, {"* * *", ""}, {"@sometimes", ""}, {"0 3 * * *", "Mars/Olympus"},
		{"CRON_TZ=UTC 0 3 * * *", ""}, {"* * * * * *", ""},
		{"0 3 * * 8", ""}, {"0 3 * * 6-8", ""}, {"0 3 * * 7-1", ""},
		// Valid fields that no date matches: cron never runs them.
		{"0 0 30 2 *", ""}, {"0 0 31 4,6,9,11 *", "UTC"},
		// An interval under a second, which robfig/cron makes one second.
		{"@every 0s", ""}, {"@every -1h", ""}, {"@every 500ms", ""},
	} {
		if _, err := claim.ParseCron(tt.expr, tt.tz); !errors.Is(err, claim.ErrInvalid) {
			t.Errorf("ParseCron(%q, %q) = %v, want ErrInvalid", tt.expr, tt.tz, err)
		}
	}
}

// zonelessHelperEnv marks the process TestCronZonesWithoutSystemData runs
// with the host's time zone data hidden.
const zonelessHelperEnv = "QUEUECTL_ZONELESS_TEST_HELPER"

// TestCronZonesWithoutSystemData: a host with no time zone data (a minimal
// container, tzdata not installed) still reads a schedule's --tz: the
// program carries its own copy of the IANA database. The check runs in a
// process of its own, in a mount namespace where /usr/share/zoneinfo is an
// empty directory, and with no Go installation to find.
func TestCronZonesWithoutSystemData(t *testing.T) {
	if os.Getenv(zonelessHelperEnv) != "" {
		if entries, _ := os.ReadDir("/usr/share/zoneinfo"); len(entries) > 0 {
			t.Fatalf("the helper sees %d entries in /usr/share/zoneinfo, want none", len(entries))
		}
		c, err := claim.ParseCron("0 3 * * *", "Europe/Paris")
		if err != nil {
			t.Fatalf("ParseCron with --tz Europe/Paris and no system zone data: %v", err)
		}
		// 03:00 in Paris on a winter day is 02:00 UTC.
		if got := c.Next(time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2026, 1, 11, 2, 0, 0, 0, time.UTC)) {
			t.Errorf("next run = %v, want 2026-01-11 02:00 UTC", got.UTC())
		}
		return
	}
	if os.Geteuid() != 0 {
		testenv.Missing(t, "hiding the host's time zone data takes a mount namespace, which takes root")
	}
	unshare := testenv.LookPath(t, "unshare", "util-linux")
	empty := t.TempDir()
	cmd := exec.CommandContext(t.Context(), unshare, "--mount", "--propagation", "private", "sh", "-c",
		`mount --bind "$1" /usr/share/zoneinfo && exec "$2" -test.run='^TestCronZonesWithoutSystemData$' -test.count=1 -test.v`,
		"sh", empty, os.Args[0])
	// Nor may it find the copy a Go installation has: GOROOT names an empty
	// directory, as on a host with no Go.
	cmd.Env = append(os.Environ(), zonelessHelperEnv+"=1", "ZONEINFO=", "GOROOT="+empty)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestCronZonesWithoutSystemData") {
		t.Fatalf("the check with no time zone data on the host: %v\n%s", err, out)
	}
}

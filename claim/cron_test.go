package claim_test

import (
	"errors"
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

func TestParseCronErrors(t *testing.T) {
	for _, tt := range []struct{ expr, tz string }{
		{"61 * * * *", ""}, {"* * *", ""}, {"@sometimes", ""}, {"0 3 * * *", "Mars/Olympus"},
		{"CRON_TZ=UTC 0 3 * * *", ""}, {"* * * * * *", ""},
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

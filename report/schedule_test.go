package report

import (
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// TestSchedulesSaySkips: a due time that made no job of its own is shown
// with its reason, in the table and in JSON; a schedule without one shows
// none.
func TestSchedulesSaySkips(t *testing.T) {
	skipped := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	list := []claim.Schedule{
		{Name: "nightly", Cron: "0 3 * * *", Spec: `{"command":"backup"}`, NextDue: now.Add(21 * time.Hour),
			LastJob: "nightly-1", LastState: claim.Processing, LastDue: skipped, LastSkipped: skipped, SkipReason: claim.SkipOverlap},
		{Name: "quiet", Cron: "@hourly", Spec: `{"command":"true"}`, NextDue: now.Add(time.Hour)},
	}
	p, out := printer(false, false)
	if err := p.Schedules(list); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.Contains(lines[0], "LAST SKIPPED") {
		t.Errorf("header %q has no LAST SKIPPED", lines[0])
	}
	if want := skipped.Local().Format("2006-01-02 15:04") + " overlap"; !strings.Contains(lines[1], want) {
		t.Errorf("nightly's row %q does not say %q", lines[1], want)
	}
	j := SchedulesJSON(list)
	if j[0].LastSkipped != "2026-11-21T03:00:00Z" || j[0].SkipReason != "overlap" {
		t.Errorf("nightly's JSON last_skipped %q, skip_reason %q, want 2026-11-21T03:00:00Z, overlap", j[0].LastSkipped, j[0].SkipReason)
	}
	if j[1].LastSkipped != "" || j[1].SkipReason != "" {
		t.Errorf("quiet's JSON last_skipped %q, skip_reason %q, want none", j[1].LastSkipped, j[1].SkipReason)
	}
}

package report

import (
	"fmt"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// stamp is the one JSON form of a time: RFC 3339 in UTC, with only the
// fractional digits needed. The zero time is "" so omitempty drops it.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// when is the text form of a time: whole seconds for the eye, then its age
// ("2026-11-21T05:45:00Z (3m ago)"). The zero time is "": unset.
func (p Printer) when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339) + " (" + p.age(t) + ")"
}

// age says how long ago t was ("4s ago", "3m ago") or how far ahead it is
// ("in 2h"); a table cell wants one short word, not a timestamp.
func (p Printer) age(t time.Time) string {
	if t.IsZero() {
		return none
	}
	d := p.now().Sub(t)
	switch {
	case d < -time.Second:
		return "in " + coarse(-d)
	case d < time.Second:
		return "just now"
	}
	return coarse(d) + " ago"
}

// coarse rounds d down to its largest unit, as ls and kubectl do.
func coarse(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// duration is how long something took: "350ms", "1.2s", "42s", "4m10s",
// "2h5m". Precision shrinks as the number grows; nobody reads 4m10.337s.
func duration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	if d = d.Round(time.Second); d < time.Hour {
		return pair(int(d/time.Minute), "m", int(d%time.Minute/time.Second), "s")
	}
	d = d.Round(time.Minute)
	return pair(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "m")
}

// pair writes two units, leaving out a zero one: "4m", "42s", "4m10s".
func pair(a int, aUnit string, b int, bUnit string) string {
	switch {
	case a == 0:
		return fmt.Sprintf("%d%s", b, bUnit)
	case b == 0:
		return fmt.Sprintf("%d%s", a, aUnit)
	}
	return fmt.Sprintf("%d%s%d%s", a, aUnit, b, bUnit)
}

// runDuration is how long a run took, or has taken so far while it runs.
func (p Printer) runDuration(r claim.Run) string {
	if r.EndedAt.IsZero() {
		return duration(p.now().Sub(r.StartedAt))
	}
	return duration(r.EndedAt.Sub(r.StartedAt))
}

// Age is the table word for t: "4s ago", "in 2h", "-" for the zero time.
// The dashboard shows times in the CLI's words through it.
func (p Printer) Age(t time.Time) string { return p.age(t) }

// RunningFor is the table word for how long processing job j has run
// (RUNNING FOR): "-" for a job that is not running.
func (p Printer) RunningFor(j claim.Job) string { return p.runningFor(j) }

// Reason is the table word for why pending job j waits, or when failed
// job j runs again ("retry in 28s", "retry due"), as list's REASON says
// it: "-" for any other job.
func (p Printer) Reason(j claim.Job) string { return p.reason(j) }

// When is t for the eye, "2026-11-21T05:45:00Z (3m ago)", or "".
func (p Printer) When(t time.Time) string { return p.when(t) }

// RunDuration is how long r took, or has taken so far: "1.2s", "4m10s".
func (p Printer) RunDuration(r claim.Run) string { return p.runDuration(r) }

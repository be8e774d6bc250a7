package claim

import (
	"strconv"
	"strings"
	"time"
	// The IANA time zone database, for a host that has none (a minimal
	// container, tzdata not installed): --tz and a schedule file's "tz"
	// work anywhere. The host's own data, when there is some, comes first.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// Cron is a parsed cron expression with the time zone its fields are read
// in: 5 fields (minute hour day-of-month month day-of-week) or a name such
// as @daily, @hourly or "@every 10m", as crontab(5) and robfig/cron write them.
type Cron struct {
	Expr string
	TZ   string // IANA name; "" is the local time zone of the worker
	loc  *time.Location
	s    cron.Schedule
	// wild: the minute or hour field is a wildcard, so the schedule
	// follows real time across a clock change (Next).
	wild bool
}

// ParseCron reads expr in the time zone tz ("" for local time). Errors wrap
// ErrInvalid.
func ParseCron(expr, tz string) (Cron, error) {
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return Cron{}, invalidf("cron %q: give the time zone with --tz (\"tz\" in a schedule file), not in the expression", expr)
	}
	loc := time.Local
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return Cron{}, invalidf("time zone %q is unknown: give an IANA name such as Europe/Berlin or UTC", tz)
		}
		loc = l
	}
	// robfig/cron makes any @every under a second (0s, -1h) every second.
	if d, ok := strings.CutPrefix(expr, "@every "); ok {
		if every, err := time.ParseDuration(strings.TrimSpace(d)); err == nil && every < time.Second {
			return Cron{}, invalidf("cron %q: the interval must be at least 1s, such as @every 10m", expr)
		}
	}
	s, err := cron.ParseStandard(sundaySeven(expr))
	if err != nil {
		return Cron{}, invalidf("cron %q: %v; write 5 fields (minute hour day month weekday) such as \"0 3 * * *\", or @hourly, @daily, @weekly, @every 10m", expr, err)
	}
	c := Cron{Expr: expr, TZ: tz, loc: loc, s: s}
	if spec, ok := s.(*cron.SpecSchedule); ok {
		spec.Location = loc
		// crontab(5) takes a field that begins with * (*/15 too) for a
		// wildcard; robfig/cron marks a bare * only, and @hourly's hour.
		// A wildcard minute or hour follows real time (Next); with a
		// wildcard day field, a day must match the other one too, where
		// two restricted day fields take a day either matches.
		const star = 1 << 63
		c.wild = spec.Minute&star != 0 || spec.Hour&star != 0
		if f := strings.Fields(expr); len(f) == 5 {
			c.wild = strings.HasPrefix(f[0], "*") || strings.HasPrefix(f[1], "*")
			if strings.HasPrefix(f[2], "*") {
				spec.Dom |= star
			}
			if strings.HasPrefix(f[4], "*") {
				spec.Dow |= star
			}
		}
	}
	// robfig/cron answers "never" with the zero time, which is always past:
	// taken as a due time, it would make a job at every look.
	if c.Next(time.Now()).IsZero() {
		return Cron{}, invalidf("cron %q never falls due: no date has that day of the month in those months (such as 30 February); check the day-of-month and month fields", expr)
	}
	return c, nil
}

// Next returns the first due time after t.
//
// Daylight saving time is handled as Vixie cron (and so Debian's and
// cronie's) handles it. A job whose minute and hour fields are both fixed
// ("30 2 * * *", @daily) runs once a day in wall-clock terms: a time skipped
// when the clocks spring forward runs at the instant of the change, and a
// time repeated when they fall back runs only the first time. A job with a
// wildcard minute or hour ("*/15 * * * *", "0 */2 * * *", "0 * * * *",
// @hourly) follows real time: nothing is made up for the skipped hour, and
// the repeated hour runs again.
//
// A Cron without a time zone reads its fields in this process's local time,
// whatever the location of t: robfig/cron alone reads them in t's location,
// so a time read back from the store (UTC) gave another due time than
// time.Now() did.
func (c Cron) Next(t time.Time) time.Time {
	t = t.In(c.loc)
	spec, ok := c.s.(*cron.SpecSchedule)
	if !ok || c.wild {
		return c.s.Next(t) // @every: a constant delay; a wildcard: real time
	}
	for n := spec.Next(t); !n.IsZero(); n = spec.Next(n) {
		if gap, ok := c.gapMatch(spec, t, n); ok {
			return gap
		}
		if !c.repeated(n) {
			return n
		}
	}
	return time.Time{}
}

// gapMatch finds a spring-forward change between after and n whose skipped
// wall-clock minutes the schedule matches, and returns the change's instant.
func (c Cron) gapMatch(spec *cron.SpecSchedule, after, n time.Time) (time.Time, bool) {
	_, offAfter := after.In(c.loc).Zone()
	_, offN := n.In(c.loc).Zone()
	if offN <= offAfter {
		return time.Time{}, false
	}
	// The change is the first instant with the later offset.
	lo, hi := after, n
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if _, off := mid.In(c.loc).Zone(); off == offN {
			hi = mid
		} else {
			lo = mid
		}
	}
	change := hi.Truncate(time.Second)
	if !change.After(after) {
		return time.Time{}, false
	}
	// The skipped wall times run from the change's wall clock under the old
	// offset, for the offsets' difference. Read them in a zone without DST.
	before := time.FixedZone("", offAfter)
	wall := change.In(before)
	fixedSpec := *spec
	fixedSpec.Location = before
	for m := time.Duration(0); m < time.Duration(offN-offAfter)*time.Second; m += time.Minute {
		w := wall.Add(m)
		if fixedSpec.Next(w.Add(-time.Second)).Equal(w) {
			return change, true
		}
	}
	return time.Time{}, false
}

// repeated reports whether n's wall clock already happened earlier, under
// an offset the clocks fell back from.
func (c Cron) repeated(n time.Time) bool {
	_, offN := n.In(c.loc).Zone()
	_, offEarlier := n.Add(-3 * time.Hour).In(c.loc).Zone()
	if offEarlier <= offN {
		return false
	}
	u := n.Add(-time.Duration(offEarlier-offN) * time.Second)
	_, offU := u.In(c.loc).Zone()
	return offU == offEarlier
}

// sundaySeven returns expr with each 7 of its day-of-week field made 0:
// crontab(5) takes both for Sunday (0-7), robfig/cron only 0 (0-6). A part
// that names 7 (7, 5-7, 1-7/2, 7/2) becomes the list of its days; the rest,
// and anything not a plain number, robfig/cron reads as written.
func sundaySeven(expr string) string {
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return expr
	}
	parts := strings.Split(fields[4], ",")
	for i, p := range parts {
		rng, step, stepped := strings.Cut(p, "/")
		lo, hi, ranged := strings.Cut(rng, "-")
		if lo != "7" && hi != "7" {
			continue
		}
		first, err1 := strconv.Atoi(lo)
		last, err2 := strconv.Atoi(hi)
		if !ranged {
			last, err2 = first, nil
			if stepped {
				last = 7 // N/step: from N to the field's end
			}
		}
		every := 1
		if stepped {
			every, _ = strconv.Atoi(step)
		}
		if err1 != nil || err2 != nil || every < 1 || first > last || last > 7 {
			continue // robfig/cron says what is wrong
		}
		var days []string
		for d := first; d <= last; d += every {
			days = append(days, strconv.Itoa(d%7))
		}
		parts[i] = strings.Join(days, ",")
	}
	fields[4] = strings.Join(parts, ",")
	return strings.Join(fields, " ")
}

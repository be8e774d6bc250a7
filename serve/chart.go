package serve

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// chartSpan is how far back the runs-per-minute chart looks.
const chartSpan = time.Hour

// The chart's drawing area, in SVG units; the SVG scales to its box.
const (
	chartW, chartH = 1000.0, 190.0
	chartLeft      = 36.0 // room for the scale
	chartBottom    = 20.0 // room for the time axis
)

// chart is the runs-per-minute chart as the template draws it: one bar per
// minute of the last hour, stacked by outcome, computed here so that the
// page needs no script to show it.
type chart struct {
	W, H    float64
	Bars    []bar
	Max     int // runs in the busiest minute
	Total   int
	Failed  int
	Ticks   []tick
	GridY   float64
	BaseY   float64
	Left    float64
	Right   float64
	Summary string // the chart in words, for screen readers and text browsers
}

type bar struct {
	X, Y, W, H float64
	Class      string // the outcome
	Title      string
}

type tick struct {
	X      float64
	Label  string
	Anchor string // text-anchor: the first and last stay inside the box
}

// newChart lays out the runs per minute of the hour before now.
func newChart(perMinute []claim.MinuteRuns, now time.Time) chart {
	const slots = int(chartSpan / time.Minute)
	first := now.Truncate(time.Minute).Add(-time.Duration(slots-1) * time.Minute)
	counts := make([]map[string]int, slots)
	c := chart{W: chartW, H: chartH, Left: chartLeft, Right: chartW, BaseY: chartH - chartBottom}
	for _, m := range perMinute {
		i := int(m.Minute.Sub(first) / time.Minute)
		if i < 0 || i >= slots {
			continue
		}
		if counts[i] == nil {
			counts[i] = map[string]int{}
		}
		counts[i][m.Outcome] += m.N
		c.Total += m.N
		if m.Outcome == claim.OutcomeFailed {
			c.Failed += m.N
		}
	}
	for _, m := range counts {
		n := 0
		for _, v := range m {
			n += v
		}
		c.Max = max(c.Max, n)
	}
	scale := max(c.Max, 1)
	plotH := c.BaseY - 8
	c.GridY = c.BaseY - plotH
	slotW := (chartW - chartLeft) / float64(slots)
	for i, m := range counts {
		x := chartLeft + float64(i)*slotW + 1
		y := c.BaseY
		at := first.Add(time.Duration(i) * time.Minute).UTC().Format("15:04")
		for _, outcome := range []string{claim.OutcomeCompleted, claim.OutcomeFailed, claim.OutcomeLost, claim.OutcomeInterrupted, claim.OutcomeCanceled} {
			n := m[outcome]
			if n == 0 {
				continue
			}
			h := float64(n) / float64(scale) * plotH
			y -= h
			c.Bars = append(c.Bars, bar{X: x, Y: y, W: slotW - 2, H: h, Class: outcome,
				Title: fmt.Sprintf("%s UTC: %d %s", at, n, outcome)})
		}
	}
	for _, back := range []int{60, 45, 30, 15, 0} {
		label := fmt.Sprintf("-%dm", back)
		if back == 0 {
			label = "now"
		}
		c.Ticks = append(c.Ticks, tick{X: chartLeft + float64(slots-back)*slotW, Label: label, Anchor: "middle"})
	}
	c.Ticks[0].X, c.Ticks[0].Anchor = chartLeft, "start"
	c.Ticks[len(c.Ticks)-1].Anchor = "end"
	c.Summary = summary(c)
	return c
}

// summary says what chart c shows in words.
func summary(c chart) string {
	switch {
	case c.Total == 0:
		return "No run ended in the last hour."
	case c.Total == 1 && c.Failed == 1:
		return "1 run ended in the last hour, and it failed."
	case c.Total == 1:
		return "1 run ended in the last hour."
	}
	return fmt.Sprintf("%d runs ended in the last hour, %d of them failed; the busiest minute had %d.", c.Total, c.Failed, c.Max)
}

// minuteCache keeps the runs per minute of the minutes that are over, so
// that the overview reads only the last few minutes' runs, however busy
// the hour was. A minute is taken as final a minute after it ends: a run
// committed later than that with an earlier end time is not drawn.
type minuteCache struct {
	mu   sync.Mutex
	upTo time.Time // minutes before this are in runs
	runs []claim.MinuteRuns
}

// runsPerMinute returns the runs per minute and outcome since the chart's
// first minute before now.
func (s *Server) runsPerMinute(ctx context.Context, now time.Time) ([]claim.MinuteRuns, error) {
	c := &s.minutes
	c.mu.Lock()
	defer c.mu.Unlock()
	first := now.Truncate(time.Minute).Add(-chartSpan + time.Minute)
	since := first
	if c.upTo.After(since) {
		since = c.upTo
	}
	fresh, err := s.store.RunsPerMinute(ctx, since)
	if err != nil {
		return nil, err
	}
	var out []claim.MinuteRuns
	for _, m := range c.runs {
		if !m.Minute.Before(first) && m.Minute.Before(since) {
			out = append(out, m)
		}
	}
	c.runs = out
	settled := now.Add(-time.Minute).Truncate(time.Minute)
	for _, m := range fresh {
		if m.Minute.Before(settled) {
			c.runs = append(c.runs, m)
		}
	}
	if settled.After(c.upTo) {
		c.upTo = settled
	}
	return append(out[:len(out):len(out)], fresh...), nil
}

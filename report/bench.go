package report

import (
	"fmt"
	"math"
)

// BenchRow is one result of `queuectl bench` (bench.Result, field for
// field).
type BenchRow struct {
	Scenario string
	Rate     float64 // per second; 0 when the scenario is not a rate
	P50, P99 float64 // in Unit; 0 when not measured
	Unit     string  // "ms" or "MB"
	Limit    string  // what the result is held against
	Ratio    float64 // the result over the limit
	Target   string  // what Ratio must be
	Met      bool
}

type benchObject struct {
	Scenario string   `json:"scenario"`
	Rate     *float64 `json:"rate_per_s,omitempty"`
	P50      *float64 `json:"p50,omitempty"`
	P99      *float64 `json:"p99,omitempty"`
	Unit     string   `json:"unit,omitempty"`
	Limit    string   `json:"limit"`
	Ratio    float64  `json:"ratio"`
	Target   string   `json:"target"`
	Met      bool     `json:"met"`
}

// Bench renders the results of `queuectl bench`: a table with one row per
// scenario (SCENARIO, RATE, P50, P99, LIMIT, RATIO, TARGET, MET), or a JSON
// array of {scenario, rate_per_s, p50, p99, unit, limit, ratio, target,
// met}, where rate_per_s, p50, p99 and unit appear only when measured.
func (p Printer) Bench(rows []BenchRow) error {
	if p.JSON {
		out := make([]benchObject, len(rows))
		for i, r := range rows {
			out[i] = benchObject{Scenario: r.Scenario, Unit: r.Unit, Limit: r.Limit,
				Ratio: round(r.Ratio, 3), Target: r.Target, Met: r.Met,
				Rate: optional(r.Rate, 0), P50: optional(r.P50, 2), P99: optional(r.P99, 2)}
		}
		return WriteJSON(p.Out, out)
	}
	table := make([][]string, len(rows))
	for i, r := range rows {
		met := "yes"
		if !r.Met {
			met = "NO"
		}
		rate := none
		if r.Rate > 0 {
			rate = fmt.Sprintf("%.0f/s", math.Round(r.Rate))
		}
		table[i] = []string{r.Scenario, rate, measure(r.P50, r.Unit), measure(r.P99, r.Unit),
			r.Limit, fmt.Sprintf("%.2f", r.Ratio), r.Target, met}
	}
	return writeTable(p.Out, []string{"SCENARIO", "RATE", "P50", "P99", "LIMIT", "RATIO", "TARGET", "MET"}, table)
}

func measure(v float64, unit string) string {
	if v == 0 {
		return none
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

func optional(v float64, digits int) *float64 {
	if v == 0 {
		return nil
	}
	r := round(v, digits)
	return &r
}

func round(v float64, digits int) float64 {
	f := math.Pow(10, float64(digits))
	return math.Round(v*f) / f
}

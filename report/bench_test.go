package report

import "testing"

func TestBench(t *testing.T) {
	rows := []BenchRow{
		{Scenario: "throughput: 10000 true jobs, 4 slots", Rate: 1234.5, Limit: "1900/s: sh -c true, 4 at a time",
			Ratio: 0.6497, Target: "≥ 0.80"},
		{Scenario: "latency: spool drop to job start, idle worker", P50: 1.234, P99: 3.456, Unit: "ms",
			Limit: "p50 10 ms, p99 50 ms", Ratio: 0.1234, Target: "≤ 1.00", Met: true},
		{Scenario: "RSS of worker start --count 8, running jobs", P50: 17, P99: 18.25, Unit: "MB",
			Limit: "peak 18.3 MB ≤ 40 MB", Ratio: 0.456, Target: "≤ 1.00", Met: true},
	}
	for _, json := range []bool{false, true} {
		name := "text"
		if json {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			p, buf := printer(json, false)
			if err := p.Bench(rows); err != nil {
				t.Fatal(err)
			}
			golden(t, buf.Bytes())
		})
	}
}

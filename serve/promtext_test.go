package serve

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestPromText: what promText writes is read back by Prometheus's own
// parser as written: escaped label values and help, cumulative buckets
// with an observation on a bound counted in that bound's bucket.
func TestPromText(t *testing.T) {
	h := newHistogram([]float64{0.5, 1, 2})
	for _, v := range []float64{0.1, 1, 1.5, 7} {
		h.observe(v)
	}
	odd := "a\\b\"c\nd"
	var p promText
	p.family("x_total", "counter", "Help with \\ and\na line feed.")
	p.sample("x_total", 3, "queue", odd, "state", "pending")
	p.family("x_seconds", "histogram", "A histogram.")
	p.histogram("x_seconds", h, "outcome", "failed")
	p.family("x_empty", "gauge", "No samples yet.")

	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(p.String()))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, p.String())
	}
	c := fams["x_total"]
	if got := c.GetHelp(); got != "Help with \\ and\na line feed." {
		t.Errorf("help = %q", got)
	}
	if len(c.Metric) != 1 || c.Metric[0].GetCounter().GetValue() != 3 || c.Metric[0].Label[0].GetValue() != odd {
		t.Errorf("x_total = %v, want 3 with queue %q", c.Metric, odd)
	}
	hs := fams["x_seconds"].Metric[0].GetHistogram()
	if hs.GetSampleCount() != 4 || hs.GetSampleSum() != 9.6 {
		t.Errorf("count, sum = %d, %v, want 4, 9.6", hs.GetSampleCount(), hs.GetSampleSum())
	}
	want := map[float64]uint64{0.5: 1, 1: 2, 2: 3, math.Inf(1): 4}
	if len(hs.Bucket) != len(want) {
		t.Errorf("%d buckets, want %d", len(hs.Bucket), len(want))
	}
	for _, b := range hs.Bucket {
		if b.GetCumulativeCount() != want[b.GetUpperBound()] {
			t.Errorf("bucket le=%v = %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want[b.GetUpperBound()])
		}
	}
}

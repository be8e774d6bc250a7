package bench

import (
	"context"
	"testing"

	_ "github.com/queuectl/queuectl/claim/sqlite" // the SQLite engine, for claim.Open
)

// BenchmarkBareShell is one op per `sh -c true`, 4 at a time: the fork/exec
// limit BenchmarkWorker is held against.
func BenchmarkBareShell(b *testing.B) {
	took, err := bareShell(context.Background(), b.N, 4)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/took.Seconds(), "jobs/s")
}

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, tt := range []struct{ q, want float64 }{{0.5, 3}, {0.99, 5}, {0, 1}, {1, 5}} {
		if got := quantile(xs, tt.q); got != tt.want {
			t.Errorf("quantile(%v, %g) = %g, want %g", xs, tt.q, got, tt.want)
		}
	}
	if got := quantile(nil, 0.5); got != 0 {
		t.Errorf("quantile(nil) = %g, want 0", got)
	}
	if xs[0] != 5 {
		t.Errorf("quantile sorted its argument: %v", xs)
	}
}

func TestBenchVerdicts(t *testing.T) {
	if r := atLeast("x", 80, 100, "", 0.80); !r.Met || r.Ratio != 0.8 {
		t.Errorf("atLeast(80 of 100, 0.80) = %+v, want met with ratio 0.8", r)
	}
	if r := atLeast("x", 79, 100, "", 0.80); r.Met {
		t.Errorf("atLeast(79 of 100, 0.80) = %+v, want not met", r)
	}
	if r := atMost("x", 9, 60, "ms", 10, 50); r.Met || r.Ratio != 1.2 {
		t.Errorf("atMost(p50 9, p99 60 of 10/50) = %+v, want not met with ratio 1.2 (the p99)", r)
	}
	if r := atMost("x", 9, 500, "ms", 10, 0); !r.Met {
		t.Errorf("atMost(p50 9 of 10, no p99 limit) = %+v, want met", r)
	}
}

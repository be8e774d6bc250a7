package run

import (
	"context"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// BenchmarkWorker is one op per `true` job through a draining worker with 4
// slots: claim, log files, fork and exec behind the gate, process group
// record, completion. Compare with BenchmarkBareShell, the same processes
// started with nothing else (queuectl bench holds the two side by side).
func BenchmarkWorker(b *testing.B) {
	s := mustOpenStore(b)
	for i := 0; i < b.N; i += 1000 {
		batch := make([]claim.NewJob, min(1000, b.N-i))
		for k := range batch {
			batch[k] = claim.NewJob{Command: "true"}
		}
		if _, err := s.EnqueueAll(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	w := newWorker(b, s)
	w.Slots, w.Events = 4, nil
	b.ResetTimer()
	if err := w.Run(context.Background(), context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

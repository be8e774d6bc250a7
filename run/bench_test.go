package run

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// BenchmarkWorker is one op per `true` job through a draining worker with 4
// slots: claim, log files, fork and exec behind the gate, process group
// record, completion. Compare with BenchmarkBareShell, the same processes
// started with nothing else (queuectl bench holds the two side by side).
func BenchmarkWorker(b *testing.B) { benchWorker(b, "true") }

// BenchmarkWorkerOutput is BenchmarkWorker with jobs that print a line on
// each stream: two log files, and two tails kept with each run.
func BenchmarkWorkerOutput(b *testing.B) { benchWorker(b, "echo out; echo err >&2") }

// BenchmarkWorkerBigOutput is BenchmarkWorker with jobs that print 1 MiB:
// the copy to the log file, and the tail that keeps its last 64 KiB.
func BenchmarkWorkerBigOutput(b *testing.B) { benchWorker(b, "head -c 1048576 /dev/zero") }

func benchWorker(b *testing.B, command string) {
	s := mustOpenStore(b)
	for i := 0; i < b.N; i += 1000 {
		batch := make([]claim.NewJob, min(1000, b.N-i))
		for k := range batch {
			batch[k] = claim.NewJob{Command: command}
		}
		if _, err := s.EnqueueAll(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	w := newWorker(b, s)
	w.Slots, w.Events = 4, nil
	self, children := cpuTime(syscall.RUSAGE_SELF), cpuTime(syscall.RUSAGE_CHILDREN)
	b.ResetTimer()
	if err := w.Run(context.Background(), context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	// CPU time tells changes apart on a machine too busy for wall time:
	// the worker's own (what the worker costs), and its jobs' (the shells).
	perJob := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(perJob(cpuTime(syscall.RUSAGE_SELF)-self), "worker-cpu-µs/job")
	b.ReportMetric(perJob(cpuTime(syscall.RUSAGE_CHILDREN)-children), "job-cpu-µs/job")
}

// cpuTime is the user and system time of who (RUSAGE_SELF, RUSAGE_CHILDREN).
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

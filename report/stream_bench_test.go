package report

import (
	"fmt"
	"io"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// BenchmarkJobStream renders b.N jobs as `list` does, to io.Discard: the
// report's share of a list's rows a second. Every job has an id of its
// own, as in a store: a repeated id would hit width caches a real list
// misses. cpu-ns/op is the process's CPU time (GC included) a job, which
// a shared machine inflates less than the wall time.
func BenchmarkJobStream(b *testing.B) {
	for _, asJSON := range []bool{false, true} {
		b.Run(fmt.Sprintf("json=%v", asJSON), func(b *testing.B) {
			j := sampleJobs()[0]
			p := Printer{Out: io.Discard, JSON: asJSON, Now: func() time.Time { return now }}
			b.ReportAllocs()
			began := cpuTime()
			err := p.JobStream(func(yield func(claim.Job, error) bool) {
				for i := range b.N {
					j.Seq = int64(i)
					j.ID = "job-" + strconv.Itoa(1e9+i)
					if !yield(j, nil) {
						return
					}
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(cpuTime()-began)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time of the process so far, user and system.
func cpuTime() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

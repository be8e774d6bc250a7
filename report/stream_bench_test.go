package report

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// BenchmarkJobStream renders b.N jobs as `list` does, to io.Discard: the
// report's share of a list's rows a second.
func BenchmarkJobStream(b *testing.B) {
	for _, asJSON := range []bool{false, true} {
		b.Run(fmt.Sprintf("json=%v", asJSON), func(b *testing.B) {
			j := sampleJobs()[0]
			p := Printer{Out: io.Discard, JSON: asJSON, Now: func() time.Time { return now }}
			b.ReportAllocs()
			err := p.JobStream(func(yield func(claim.Job, error) bool) {
				for i := range b.N {
					j.Seq = int64(i)
					if !yield(j, nil) {
						return
					}
				}
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

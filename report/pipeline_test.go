package report

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// manyJobs returns n jobs, each with an id of its own.
func manyJobs(n int) []claim.Job {
	jobs := make([]claim.Job, n)
	for i := range jobs {
		jobs[i] = sampleJobs()[i%5]
		jobs[i].ID = fmt.Sprintf("%s-%d", jobs[i].ID, i)
	}
	return jobs
}

// waitGoroutines fails t unless the number of goroutines comes back to
// base within a few seconds: JobStream must leave none behind.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, want %d: JobStream left some running", runtime.NumGoroutine(), base)
		}
		runtime.Gosched()
	}
}

// An error from the store after some blocks ends the output where it
// stands, as it did before the rows were read in a goroutine: every JSON
// object read so far and no closing bracket; a table's whole blocks only.
func TestJobStreamErrorMidStream(t *testing.T) {
	boom := errors.New("boom")
	jobs := manyJobs(2*streamBlock + 500)
	for _, asJSON := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", asJSON), func(t *testing.T) {
			base := runtime.NumGoroutine()
			want, wbuf := printer(asJSON, false)
			shown := jobs
			if !asJSON {
				shown = jobs[:2*streamBlock]
			}
			if err := want.Jobs(shown); err != nil {
				t.Fatal(err)
			}
			p, buf := printer(asJSON, false)
			err := p.JobStream(func(yield func(claim.Job, error) bool) {
				for _, j := range jobs {
					if !yield(j, nil) {
						return
					}
				}
				yield(claim.Job{}, boom)
			})
			if !errors.Is(err, boom) {
				t.Errorf("JobStream = %v, want boom", err)
			}
			wantOut := wbuf.String()
			if asJSON {
				wantOut = strings.TrimSuffix(wantOut, "\n]\n")
			}
			if buf.String() != wantOut {
				t.Errorf("output before the error: %d bytes, want %d", buf.Len(), len(wantOut))
			}
			waitGoroutines(t, base)
		})
	}
}

// failingWriter accepts writes until it has taken ok of them, then fails
// each as a closed pipe does (`queuectl list | head`).
type failingWriter struct{ ok, n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if w.n == w.ok {
		return 0, syscall.EPIPE
	}
	w.n++
	return len(b), nil
}

// A write error stops the reading of an endless stream within a few
// batches, is returned, and leaves no goroutine behind.
func TestJobStreamWriteErrorStopsReading(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		for _, ok := range []int{0, 1} {
			t.Run(fmt.Sprintf("json=%v,writes=%d", asJSON, ok), func(t *testing.T) {
				base := runtime.NumGoroutine()
				p := Printer{Out: &failingWriter{ok: ok}, JSON: asJSON, Now: func() time.Time { return now }}
				read, ended := 0, false
				err := p.JobStream(func(yield func(claim.Job, error) bool) {
					defer func() { ended = true }()
					for j := sampleJobs()[0]; ; read++ {
						j.ID = fmt.Sprintf("job-%d", read)
						if !yield(j, nil) {
							return
						}
					}
				})
				if !errors.Is(err, syscall.EPIPE) {
					t.Errorf("JobStream = %v, want EPIPE", err)
				}
				if !ended {
					t.Error("JobStream returned before the stream ended")
				}
				// At most the batches in flight, and the one being filled.
				if most := (runtime.GOMAXPROCS(0) + 3) * (ok + 1) * streamBlock; read > most {
					t.Errorf("read %d jobs after the writer failed, want at most %d", read, most)
				}
				waitGoroutines(t, base)
			})
		}
	}
}

// The bytes do not depend on how many goroutines lay out the blocks.
func TestJobStreamSameOnOneCPU(t *testing.T) {
	jobs := manyJobs(3*streamBlock + 7)
	var outs [2]bytes.Buffer
	for i, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		p := Printer{Out: &outs[i], Now: func() time.Time { return now }}
		err := p.Jobs(jobs)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
	}
	if outs[0].String() != outs[1].String() {
		t.Errorf("table with GOMAXPROCS 1: %d bytes, with 4: %d", outs[0].Len(), outs[1].Len())
	}
}

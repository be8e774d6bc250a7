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

// manyDeadJobs returns n dead jobs, each with an id of its own, cycling
// through awkwardDeadJobs.
func manyDeadJobs(n int) []DeadJob {
	awkward := awkwardDeadJobs()
	jobs := make([]DeadJob, n)
	for i := range jobs {
		jobs[i] = awkward[i%len(awkward)]
		jobs[i].ID = fmt.Sprintf("%s-%d", jobs[i].ID, i)
	}
	return jobs
}

// wholeDeadJobs is `dlq list` as it was written before it streamed: the
// table of every row sized at once, or WriteJSON of the whole list.
func wholeDeadJobs(t *testing.T, p Printer, jobs []DeadJob) string {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if p.JSON {
		err = WriteJSON(&buf, DeadJobsJSON(jobs))
	} else {
		rows := make([][]string, len(jobs))
		for i, j := range jobs {
			died := j.FinishedAt
			if died.IsZero() {
				died = j.UpdatedAt
			}
			rows[i] = []string{j.ID, Attempts(j.Job), orNone(exitCode(j.ExitCode)), p.age(died),
				orNone(clip(oneLine(j.LastError), 40)), orNone(clip(oneLine(j.LastStderr), 40)), command(j.Command)}
		}
		err = writeTable(&buf, deadHeader, rows)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The stream writes what the whole list wrote: JSON at any length, a
// table up to one block (beyond, each block is sized on its own rows).
func TestDeadJobStreamAsWhole(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		for _, n := range []int{0, 1, jsonBatch + 1, streamBlock, 3*streamBlock + 7} {
			if !asJSON && n > streamBlock {
				continue
			}
			t.Run(fmt.Sprintf("json=%v,n=%d", asJSON, n), func(t *testing.T) {
				jobs := manyDeadJobs(n)
				p, buf := printer(asJSON, false)
				if err := p.DeadJobs(jobs); err != nil {
					t.Fatal(err)
				}
				if want := wholeDeadJobs(t, p, jobs); buf.String() != want {
					t.Errorf("DeadJobs of %d: %d bytes, want %d:\n%.3000s", n, buf.Len(), len(want), buf.String())
				}
			})
		}
	}
}

// Beyond a block, the table starts as the whole table of its first
// block, and has a line for each row after the header: the later blocks
// are sized on their own rows, as the job list's are.
func TestDeadJobStreamBlocks(t *testing.T) {
	jobs := manyDeadJobs(2*streamBlock + 3)
	p, buf := printer(false, false)
	if err := p.DeadJobs(jobs); err != nil {
		t.Fatal(err)
	}
	if first := wholeDeadJobs(t, p, jobs[:streamBlock]); !strings.HasPrefix(buf.String(), first) {
		t.Errorf("DeadJobs of %d does not start with the table of the first %d", len(jobs), streamBlock)
	}
	if n := strings.Count(buf.String(), "\n"); n != len(jobs)+1 {
		t.Errorf("DeadJobs of %d: %d lines, want %d", len(jobs), n, len(jobs)+1)
	}
}

// Every field of DeadJobObject, and the hard strings, as encoding/json
// writes them.
func TestAppendDeadJobObject(t *testing.T) {
	for _, j := range awkwardDeadJobs() {
		o := DeadJobObject{JobJSON(j.Job), j.LastStderr}
		o.Env = map[string]string{"K": j.LastStderr}
		o.WaitingOn = []string{"a", j.LastStderr}
		for _, limits := range []*claim.Limits{nil, {Memory: 1 << 20}} {
			o.Limits = limits
			got, err := appendDeadJobObject(nil, &o)
			if err != nil {
				t.Fatal(err)
			}
			want, err := appendIndented(nil, &o)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("appendDeadJobObject(%q) =\n%s\nwant\n%s", j.ID, got, want)
			}
		}
	}
}

// `dlq list | head`: a write error stops the reading of an endless
// stream within a few blocks, is returned, and leaves no goroutine
// behind.
func TestDeadJobStreamWriteErrorStopsReading(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", asJSON), func(t *testing.T) {
			base := runtime.NumGoroutine()
			p := Printer{Out: &failingWriter{ok: 1}, JSON: asJSON, Now: func() time.Time { return now }}
			read, ended := 0, false
			err := p.DeadJobStream(func(yield func(DeadJob, error) bool) {
				defer func() { ended = true }()
				for j := awkwardDeadJobs()[0]; ; read++ {
					j.ID = fmt.Sprintf("dead-%d", read)
					if !yield(j, nil) {
						return
					}
				}
			})
			if !errors.Is(err, syscall.EPIPE) {
				t.Errorf("DeadJobStream = %v, want EPIPE", err)
			}
			if !ended {
				t.Error("DeadJobStream returned before the stream ended")
			}
			if most := (runtime.GOMAXPROCS(0) + 3) * 2 * streamBlock; read > most {
				t.Errorf("read %d dead jobs after the writer failed, want at most %d", read, most)
			}
			waitGoroutines(t, base)
		})
	}
}

// An error from the store ends the output where it stands: every JSON
// object read so far and no closing bracket; a table's whole blocks only.
func TestDeadJobStreamErrorMidStream(t *testing.T) {
	boom := errors.New("boom")
	jobs := manyDeadJobs(streamBlock + 5)
	for _, asJSON := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", asJSON), func(t *testing.T) {
			p, buf := printer(asJSON, false)
			err := p.DeadJobStream(func(yield func(DeadJob, error) bool) {
				for _, j := range jobs {
					if !yield(j, nil) {
						return
					}
				}
				yield(DeadJob{}, boom)
			})
			if !errors.Is(err, boom) {
				t.Errorf("DeadJobStream = %v, want boom", err)
			}
			want := wholeDeadJobs(t, p, jobs[:streamBlock])
			if asJSON {
				want = strings.TrimSuffix(wholeDeadJobs(t, p, jobs), "\n]\n")
			}
			if buf.String() != want {
				t.Errorf("output before the error: %d bytes, want %d", buf.Len(), len(want))
			}
		})
	}
}

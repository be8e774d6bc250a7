package report

import (
	"iter"
	"runtime"

	"github.com/queuectl/queuectl/claim"
)

// DeadJob is a dead job with the last line of its latest run's stderr:
// what `dlq list` shows beside its error.
type DeadJob struct {
	claim.Job
	LastStderr string
}

// DeadJobsOf pairs jobs with the last lines of their stderr, in order.
func DeadJobsOf(jobs []claim.Job, lastStderr []string) []DeadJob {
	out := make([]DeadJob, len(jobs))
	for i, j := range jobs {
		out[i] = DeadJob{Job: j, LastStderr: lastStderr[i]}
	}
	return out
}

// DeadJobObject is the JSON shape of a dead job in `dlq list`: the job
// object and, when its latest run printed to stderr, last_stderr_line.
type DeadJobObject struct {
	JobObject
	LastStderr string `json:"last_stderr_line,omitempty"`
}

// DeadJobsJSON is the JSON shape of `dlq list`; never nil.
func DeadJobsJSON(jobs []DeadJob) []DeadJobObject {
	out := make([]DeadJobObject, len(jobs))
	for i, j := range jobs {
		out[i] = DeadJobObject{JobJSON(j.Job), j.LastStderr}
	}
	return out
}

// DeadJobs renders `dlq list`: why and when each dead job died. JSON is an
// array of dead job objects, `[]` when there are none.
func (p Printer) DeadJobs(jobs []DeadJob) error {
	return p.DeadJobStream(func(yield func(DeadJob, error) bool) {
		for _, j := range jobs {
			if !yield(j, nil) {
				return
			}
		}
	})
}

// DeadJobStream renders dead jobs as they come from seq, as DeadJobs
// renders a slice, and as JobStream renders the job list: a dead-letter
// queue of any size starts at once and stays small. Table rows are laid
// out in blocks of streamBlock, each sized on its own rows (a table of
// one block reads as DeadJobs' always did); JSON is one array, byte for
// byte the one WriteJSON writes of DeadJobsJSON. An error from seq ends
// the output where it stands and is returned; so is a write error, which
// stops the reading of seq. DeadJobStream returns once the goroutines
// that read seq and render it have ended.
func (p Printer) DeadJobStream(seq iter.Seq2[DeadJob, error]) error {
	if p.JSON {
		return streamJSON(p.Out, seq, deadObjects)
	}
	pl := pipeline[DeadJob]{size: streamBlock, workers: runtime.GOMAXPROCS(0), render: p.deadBlock}
	_, err := pl.run(p.Out, seq)
	return err
}

// deadHeader heads `dlq list`'s table.
var deadHeader = []string{"ID", "ATTEMPTS", "EXIT", "DIED", "LAST ERROR", "LAST STDERR", "COMMAND"}

// deadBlock lays out one block of `dlq list`'s table, the header before
// the first.
func (p Printer) deadBlock(b *batch[DeadJob]) {
	if b.err != nil {
		return // cut short by the store: a block is shown whole or not at all
	}
	rows := make([][]string, len(b.jobs))
	for i, j := range b.jobs {
		died := j.FinishedAt
		if died.IsZero() {
			died = j.UpdatedAt
		}
		rows[i] = []string{j.ID, Attempts(j.Job), orNone(exitCode(j.ExitCode)), p.age(died),
			orNone(clip(oneLine(j.LastError), 40)), orNone(clip(oneLine(j.LastStderr), 40)), command(j.Command)}
	}
	var header []string
	if b.n == 0 {
		header = deadHeader
	}
	b.out, b.err = appendRows(b.out, header, rows)
}

// deadObjects appends b's dead jobs as members of `dlq list`'s array, the
// array's opening bracket before the first.
func deadObjects(b *batch[DeadJob]) {
	for i, j := range b.jobs {
		mark := len(b.out)
		if b.n == 0 && i == 0 {
			b.out = append(b.out, "[\n  "...)
		} else {
			b.out = append(b.out, ",\n  "...)
		}
		o := DeadJobObject{JobJSON(j.Job), j.LastStderr}
		var err error
		if b.out, err = appendDeadJobObject(b.out, &o); err != nil {
			b.out = b.out[:mark]
			if b.err == nil { // the store's error, which cut the batch, comes first
				b.err = err
			}
			return
		}
	}
}

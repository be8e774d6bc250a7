package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/queuectl/queuectl/claim"
)

// Enqueued renders what enqueue did. Results with Err are left out: main
// reports those on stderr.
//
// Text: "Enqueued job <id>" for a created job, "Re-drove dead job <id>"
// for a re-driven one, nothing for a skipped or duplicate one (main writes
// the note on stderr, keeping stdout for data).
// quiet: the bare id of every result, one per line, the existing job's id
// for a skipped one, so `id=$(queuectl enqueue -q …)` always gets the job
// that will run.
// JSON: one job object when len(rs) == 1, else an array of them; each also
// has "outcome": created, skipped (a live job holds the unique_key: the
// object is that job), duplicate or redriven. The skip is data, so --json
// puts it here and nothing on stderr.
func (p Printer) Enqueued(rs []claim.Result, quiet bool) error {
	if p.JSON {
		var ok []claim.Result
		for _, r := range rs {
			if r.Err == nil {
				ok = append(ok, r)
			}
		}
		if len(rs) == 1 {
			if len(ok) == 0 {
				return nil
			}
			return WriteJSON(p.Out, enqueuedJSON(ok[0]))
		}
		out := make([]enqueuedObject, len(ok))
		for i, r := range ok {
			out[i] = enqueuedJSON(r)
		}
		return WriteJSON(p.Out, out)
	}
	// A Result is large: the lines are made from rs in place, not from a
	// copy of those without an error (a stream passes 1,000 at a time).
	var b strings.Builder
	for i := range rs {
		r := &rs[i]
		switch {
		case r.Err != nil:
		case quiet:
			b.WriteString(r.Job.ID)
			b.WriteByte('\n')
		case r.Outcome == claim.Created:
			fmt.Fprintf(&b, "Enqueued job %s\n", r.Job.ID)
		case r.Outcome == claim.Redriven:
			fmt.Fprintf(&b, "Re-drove dead job %s\n", r.Job.ID)
		}
	}
	_, err := io.WriteString(p.Out, b.String())
	return err
}

// enqueuedObject is a job object with what enqueue did with it.
type enqueuedObject struct {
	JobObject
	Outcome claim.Outcome `json:"outcome"`
}

func enqueuedJSON(r claim.Result) enqueuedObject {
	return enqueuedObject{JobJSON(r.Job), r.Outcome}
}

// EnqueuedWriter renders, as Enqueued does, what enqueue did with a stream
// of jobs, a part at a time: JSON is always an array then. Close ends it.
type EnqueuedWriter struct {
	p     Printer
	quiet bool
	n     int // JSON objects written
}

// EnqueuedStream returns an EnqueuedWriter to p.Out.
func (p Printer) EnqueuedStream(quiet bool) *EnqueuedWriter {
	return &EnqueuedWriter{p: p, quiet: quiet}
}

// Add renders rs.
func (w *EnqueuedWriter) Add(rs []claim.Result) error {
	if !w.p.JSON {
		return w.p.Enqueued(rs, w.quiet)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("  ", "  ")
	enc.SetEscapeHTML(false)
	for _, r := range rs {
		if r.Err != nil {
			continue
		}
		if w.n == 0 {
			b.WriteString("[\n  ")
		} else {
			b.WriteString(",\n  ")
		}
		w.n++
		if err := enc.Encode(enqueuedJSON(r)); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // the encoder's newline
	}
	_, err := w.p.Out.Write(b.Bytes())
	return err
}

// Close ends the JSON array.
func (w *EnqueuedWriter) Close() error {
	if !w.p.JSON {
		return nil
	}
	end := "\n]\n"
	if w.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(w.p.Out, end)
	return err
}

package wire

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
)

// A brief stream (RunBrief) reads the worker's answer and frames with
// parseRunAnswer and parseFrame instead of encoding/json, which reflected
// over a whole job's types in every `queuectl run` of the small program
// (an eighth of its CPU). They read the fields the small queuectl's run
// uses, and skip the rest:
//   - a job's ID, State, UniqueKey, MaxRetries, Timeout and RunAfter;
//   - a run's Attempt, Host, StartedAt, EndedAt, Outcome and Error;
//   - a queue's Name, MaxRunning and Running.
// TestParseFrame and FuzzParseFrame hold them to json.Unmarshal into
// types of those fields only.

// parseRunAnswer reads the answer to a Run into a.
func parseRunAnswer(line []byte, a *Answer[jobs.Job]) error {
	return parseLine(line, func(p *parser, key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("Declined")):
			return p.str(&a.Declined)
		case bytes.EqualFold(key, []byte("Unknown")):
			return p.boolean(&a.Unknown)
		case bytes.EqualFold(key, []byte("Outcome")):
			return p.str((*string)(&a.Outcome))
		case bytes.EqualFold(key, []byte("Job")):
			return p.job(&a.Job)
		}
		return p.skip()
	})
}

// parseFrame reads a frame into fr.
func parseFrame(line []byte, fr *Frame) error {
	return parseLine(line, func(p *parser, key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("Stdout")):
			return p.bytes(&fr.Stdout)
		case bytes.EqualFold(key, []byte("Stderr")):
			return p.bytes(&fr.Stderr)
		case bytes.EqualFold(key, []byte("Event")):
			return pointer(p, &fr.Event, p.event)
		case bytes.EqualFold(key, []byte("Waiting")):
			return pointer(p, &fr.Waiting, p.queue)
		case bytes.EqualFold(key, []byte("End")):
			return pointer(p, &fr.End, p.job)
		case bytes.EqualFold(key, []byte("Handover")):
			return p.str(&fr.Handover)
		}
		return p.skip()
	})
}

// parseLine reads line, an object (or null), calling field for each key.
func parseLine(line []byte, field func(p *parser, key []byte) error) error {
	p := parser{b: line}
	p.space()
	if !p.null() {
		if err := p.object(func(key []byte) error { return field(&p, key) }); err != nil {
			return err
		}
	}
	if p.space(); p.i != len(p.b) {
		return errSyntax
	}
	return nil
}

// pointer reads an object into *v with fill, allocating it if nil; null
// sets *v to nil.
func pointer[T any](p *parser, v **T, fill func(*T) error) error {
	if p.null() {
		*v = nil
		return nil
	}
	if *v == nil {
		*v = new(T)
	}
	return fill(*v)
}

// fields reads an object (null leaves it) with field for each key.
func (p *parser) fields(field func(key []byte) error) error {
	if p.null() {
		return nil
	}
	if p.peek() != '{' {
		return p.mismatch()
	}
	return p.object(field)
}

func (p *parser) event(e *Event) error {
	return p.fields(func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("Job")):
			return p.job(&e.Job)
		case bytes.EqualFold(key, []byte("Run")):
			return p.run(&e.Run)
		case bytes.EqualFold(key, []byte("Ended")):
			return p.boolean(&e.Ended)
		}
		return p.skip()
	})
}

func (p *parser) job(j *jobs.Job) error {
	return p.fields(func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("ID")):
			return p.str(&j.ID)
		case bytes.EqualFold(key, []byte("State")):
			return p.str((*string)(&j.State))
		case bytes.EqualFold(key, []byte("UniqueKey")):
			return p.str(&j.UniqueKey)
		case bytes.EqualFold(key, []byte("MaxRetries")):
			return integer(p, &j.MaxRetries)
		case bytes.EqualFold(key, []byte("Timeout")):
			return integer(p, &j.Timeout)
		case bytes.EqualFold(key, []byte("RunAfter")):
			return p.time(&j.RunAfter)
		}
		return p.skip()
	})
}

func (p *parser) run(r *jobs.Run) error {
	return p.fields(func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("Attempt")):
			return integer(p, &r.Attempt)
		case bytes.EqualFold(key, []byte("Host")):
			return p.str(&r.Host)
		case bytes.EqualFold(key, []byte("StartedAt")):
			return p.time(&r.StartedAt)
		case bytes.EqualFold(key, []byte("EndedAt")):
			return p.time(&r.EndedAt)
		case bytes.EqualFold(key, []byte("Outcome")):
			return p.str(&r.Outcome)
		case bytes.EqualFold(key, []byte("Error")):
			return p.str(&r.Error)
		}
		return p.skip()
	})
}

func (p *parser) queue(q *jobs.Queue) error {
	return p.fields(func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("Name")):
			return p.str(&q.Name)
		case bytes.EqualFold(key, []byte("MaxRunning")):
			return integer(p, &q.MaxRunning)
		case bytes.EqualFold(key, []byte("Running")):
			return integer(p, &q.Running)
		}
		return p.skip()
	})
}

// integer reads a number into a signed integer of 64 bits (int,
// time.Duration), as encoding/json does: a fraction, an exponent or a
// value out of range is a mismatch; null leaves *n.
func integer[T ~int | ~int64](p *parser, n *T) error {
	if p.null() {
		return nil
	}
	start := p.i
	if c := p.peek(); c != '-' && (c < '0' || c > '9') {
		return p.mismatch()
	}
	if err := p.number(); err != nil {
		return err
	}
	v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	if err != nil {
		return errMismatch
	}
	*n = T(v)
	return nil
}

// time reads any value with time.Time's UnmarshalJSON, given the value's
// text, as encoding/json does (null leaves *t).
func (p *parser) time(t *time.Time) error {
	start := p.i
	if err := p.skip(); err != nil {
		return err
	}
	return t.UnmarshalJSON(p.b[start:p.i])
}

// bytes reads a []byte as encoding/json does: a base64 string, or an
// array of numbers 0 to 255 (as strconv.ParseUint reads them; null
// elements are 0); null sets nil.
func (p *parser) bytes(b *[]byte) error {
	switch c := p.peek(); {
	case p.null():
		*b = nil
	case c == '"':
		raw, err := p.quoted()
		if err != nil {
			return err
		}
		s, _ := unquote(raw)
		d := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
		n, err := base64.StdEncoding.Decode(d, s)
		if err != nil {
			return errMismatch
		}
		*b = d[:n]
	case c == '[':
		d := []byte{}
		err := p.elements(func() error {
			if p.null() {
				d = append(d, 0)
				return nil
			}
			start := p.i
			if c := p.peek(); c != '-' && (c < '0' || c > '9') {
				return p.mismatch()
			}
			if err := p.number(); err != nil {
				return err
			}
			v, err := strconv.ParseUint(string(p.b[start:p.i]), 10, 8)
			if err != nil {
				return errMismatch
			}
			d = append(d, byte(v))
			return nil
		})
		if err != nil {
			return err
		}
		*b = d
	default:
		return p.mismatch()
	}
	return nil
}

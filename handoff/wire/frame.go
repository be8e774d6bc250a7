package wire

import (
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
//   - a queue's Name, MaxRunning and Running;
//   - a stall's Why and Hint.
// TestParseFrame and FuzzParseFrame hold them to json.Unmarshal into
// types of those fields only.

// parseRunAnswer reads the answer to a Run into a.
func parseRunAnswer(line []byte, a *Answer[jobs.Job]) error {
	return parseLine(line, func(p *parser) []field { return answerFields(p, a, p.job) })
}

// parseFrame reads a frame into fr.
func parseFrame(line []byte, fr *Frame) error {
	return parseLine(line, func(p *parser) []field {
		return []field{
			{"Stdout", func() error { return p.bytes(&fr.Stdout) }},
			{"Stderr", func() error { return p.bytes(&fr.Stderr) }},
			{"Event", func() error { return pointer(p, &fr.Event, p.event) }},
			{"Waiting", func() error { return pointer(p, &fr.Waiting, p.queue) }},
			{"Paused", func() error { return p.str(&fr.Paused) }},
			{"Stalled", func() error { return pointer(p, &fr.Stalled, p.stall) }},
			{"End", func() error { return pointer(p, &fr.End, p.job) }},
			{"Handover", func() error { return p.str(&fr.Handover) }},
		}
	})
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

func (p *parser) event(e *Event) error {
	return p.fields(
		field{"Job", func() error { return p.job(&e.Job) }},
		field{"Run", func() error { return p.run(&e.Run) }},
		field{"Ended", func() error { return p.boolean(&e.Ended) }},
	)
}

func (p *parser) job(j *jobs.Job) error {
	return p.fields(
		field{"ID", func() error { return p.str(&j.ID) }},
		field{"State", func() error { return p.str((*string)(&j.State)) }},
		field{"UniqueKey", func() error { return p.str(&j.UniqueKey) }},
		field{"MaxRetries", func() error { return integer(p, &j.MaxRetries) }},
		field{"Timeout", func() error { return integer(p, &j.Timeout) }},
		field{"RunAfter", func() error { return p.time(&j.RunAfter) }},
	)
}

func (p *parser) run(r *jobs.Run) error {
	return p.fields(
		field{"Attempt", func() error { return integer(p, &r.Attempt) }},
		field{"Host", func() error { return p.str(&r.Host) }},
		field{"StartedAt", func() error { return p.time(&r.StartedAt) }},
		field{"ExecAt", func() error { return p.time(&r.ExecAt) }},
		field{"EndedAt", func() error { return p.time(&r.EndedAt) }},
		field{"Outcome", func() error { return p.str(&r.Outcome) }},
		field{"Error", func() error { return p.str(&r.Error) }},
	)
}

func (p *parser) queue(q *jobs.Queue) error {
	return p.fields(
		field{"Name", func() error { return p.str(&q.Name) }},
		field{"MaxRunning", func() error { return integer(p, &q.MaxRunning) }},
		field{"Running", func() error { return integer(p, &q.Running) }},
	)
}

func (p *parser) stall(s *Stall) error {
	return p.fields(
		field{"Why", func() error { return p.str(&s.Why) }},
		field{"Hint", func() error { return p.str(&s.Hint) }},
	)
}

// integer reads a number into a signed integer of 64 bits (int,
// time.Duration), as encoding/json does: a fraction, an exponent or a
// value out of range is a mismatch; null leaves *n.
func integer[T ~int | ~int64](p *parser, n *T) error {
	if p.null() {
		return nil
	}
	text, err := p.numberText()
	if err != nil {
		return err
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return errMismatch
	}
	*n = T(v)
	return nil
}

// numberText takes a number and returns its text; any other value is a
// mismatch (once its syntax is checked).
func (p *parser) numberText() (string, error) {
	start := p.i
	if c := p.peek(); c != '-' && (c < '0' || c > '9') {
		return "", p.mismatch()
	}
	if err := p.number(); err != nil {
		return "", err
	}
	return string(p.b[start:p.i]), nil
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
			text, err := p.numberText()
			if err != nil {
				return err
			}
			v, err := strconv.ParseUint(text, 10, 8)
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

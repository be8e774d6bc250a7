package jobs

import (
	"encoding/json"
	"strconv"
)

// scanSpec reads the job specs that most lines of a stream are in one
// pass: a flat object of known fields (spelled as documented, each once)
// whose values are strings, whole numbers, null, an env object of strings
// and an after array of strings. It says ok only when encoding/json would
// decode data to the same spec and DuplicateKey find no key given twice;
// anything else (an error to report, limits, a nested dead object, a key
// in other case) is left to the two passes of ParseSpec, which say what is
// wrong. data is valid UTF-8.
func scanSpec(data []byte) (s spec, ok bool) {
	p := specScanner{data: data}
	p.space()
	if !p.byte('{') {
		return spec{}, false
	}
	var seen uint32
	p.space()
	if p.byte('}') {
		return s, p.end()
	}
	for {
		p.space()
		key, ok := p.plainString()
		if !ok {
			return spec{}, false
		}
		f, ok := specFields[key]
		if !ok || seen&(1<<f) != 0 {
			return spec{}, false
		}
		seen |= 1 << f
		p.space()
		if !p.byte(':') {
			return spec{}, false
		}
		p.space()
		if !p.value(&s, f) {
			return spec{}, false
		}
		p.space()
		if p.byte('}') {
			return s, p.end()
		}
		if !p.byte(',') {
			return spec{}, false
		}
	}
}

// The fields of spec that scanSpec reads, by their JSON names.
const (
	fID = iota
	fCommand
	fMaxRetries
	fBackoffBase
	fPriority
	fQueue
	fRunAt
	fDelay
	fTimeout
	fEnv
	fCwd
	fUniqueKey
	fLabel
	fAfter
	fOnSuccess
	fOnFailure
	fOnDead
)

var specFields = map[string]int{
	"id": fID, "command": fCommand, "max_retries": fMaxRetries, "backoff_base": fBackoffBase,
	"priority": fPriority, "queue": fQueue, "run_at": fRunAt, "delay": fDelay, "timeout": fTimeout,
	"env": fEnv, "cwd": fCwd, "unique_key": fUniqueKey, "label": fLabel, "after": fAfter,
	"on_success": fOnSuccess, "on_failure": fOnFailure, "on_dead": fOnDead,
}

type specScanner struct {
	data []byte
	i    int
}

// value reads the value of field f into s.
func (p *specScanner) value(s *spec, f int) bool {
	switch f {
	case fMaxRetries, fBackoffBase, fPriority:
		dst := &s.Priority
		switch f {
		case fMaxRetries:
			dst = &s.MaxRetries
		case fBackoffBase:
			dst = &s.BackoffBase
		}
		if p.null() {
			return true
		}
		n, ok := p.integer()
		*dst = &n
		return ok
	case fDelay, fTimeout:
		dst := &s.Delay
		if f == fTimeout {
			dst = &s.Timeout
		}
		start := p.i
		ok := p.null()
		if !ok {
			_, ok = p.string()
		}
		if !ok {
			ok = p.number()
		}
		*dst = json.RawMessage(append([]byte(nil), p.data[start:p.i]...))
		return ok
	case fEnv:
		return p.null() || p.env(s)
	case fAfter:
		return p.null() || p.after(s)
	}
	dst := s.stringField(f)
	if p.null() {
		return true
	}
	v, ok := p.string()
	*dst = &v
	return ok
}

// stringField is the string field f of s.
func (s *spec) stringField(f int) **string {
	switch f {
	case fID:
		return &s.ID
	case fCommand:
		return &s.Command
	case fQueue:
		return &s.Queue
	case fRunAt:
		return &s.RunAt
	case fCwd:
		return &s.Cwd
	case fUniqueKey:
		return &s.UniqueKey
	case fLabel:
		return &s.Label
	case fOnSuccess:
		return &s.OnSuccess
	case fOnFailure:
		return &s.OnFailure
	}
	return &s.OnDead
}

// env reads an object of strings, each key once.
func (p *specScanner) env(s *spec) bool {
	if !p.byte('{') {
		return false
	}
	s.Env = map[string]string{}
	p.space()
	if p.byte('}') {
		return true
	}
	for {
		p.space()
		k, ok := p.string()
		if _, dup := s.Env[k]; !ok || dup {
			return false
		}
		p.space()
		if !p.byte(':') {
			return false
		}
		p.space()
		if s.Env[k], ok = p.string(); !ok {
			return false
		}
		p.space()
		if p.byte('}') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

// after reads an array of strings.
func (p *specScanner) after(s *spec) bool {
	if !p.byte('[') {
		return false
	}
	s.After = []string{}
	p.space()
	if p.byte(']') {
		return true
	}
	for {
		p.space()
		v, ok := p.string()
		if !ok {
			return false
		}
		s.After = append(s.After, v)
		p.space()
		if p.byte(']') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

func (p *specScanner) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *specScanner) byte(c byte) bool {
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end says whether only white space follows.
func (p *specScanner) end() bool {
	p.space()
	return p.i == len(p.data)
}

func (p *specScanner) null() bool {
	if len(p.data)-p.i >= 4 && string(p.data[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// plainString reads a string without escapes, as a key is written.
func (p *specScanner) plainString() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return string(p.data[start : p.i-1]), true
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// string reads a JSON string; one with escapes is decoded by encoding/json.
func (p *specScanner) string() (string, bool) {
	start := p.i
	if !p.byte('"') {
		return "", false
	}
	escaped := false
	for p.i < len(p.data) {
		c := p.data[p.i]
		p.i++
		switch {
		case c == '"' && !escaped:
			return string(p.data[start+1 : p.i-1]), true
		case c == '"':
			var v string
			err := json.Unmarshal(p.data[start:p.i], &v)
			return v, err == nil
		case c == '\\':
			escaped = true
			if p.i < len(p.data) {
				p.i++ // the escaped byte: a quote does not end the string
			}
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

// integer reads a JSON number that is a whole number an int holds.
func (p *specScanner) integer() (int, bool) {
	start := p.i
	if !p.number() {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.data[start:p.i]), 10, 0)
	return int(n), err == nil
}

// number reads a JSON number.
func (p *specScanner) number() bool {
	start := p.i
	p.byte('-')
	switch {
	case p.byte('0'):
	case p.digits() == 0:
		p.i = start
		return false
	}
	if p.byte('.') && p.digits() == 0 {
		return false
	}
	if p.byte('e') || p.byte('E') {
		if !p.byte('+') {
			p.byte('-')
		}
		if p.digits() == 0 {
			return false
		}
	}
	return true
}

func (p *specScanner) digits() int {
	start := p.i
	for p.i < len(p.data) && '0' <= p.data[p.i] && p.data[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

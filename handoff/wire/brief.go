package wire

import (
	"bytes"
	"errors"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseBrief reads a worker's answer line as json.Unmarshal reads it into
// an Answer[Brief], error for error: it checks the whole line's syntax and
// takes the top-level fields and the job's ID, UniqueKey and State,
// skipping the rest of the job. encoding/json's first use of a type
// (its decoder's caches) cost an enqueue more than the rest of its
// reading; TestParseBrief and FuzzParseBrief hold this to it.
func ParseBrief(line []byte) (Answer[Brief], error) {
	var a Answer[Brief]
	err := parseLine(line, func(p *parser) []field { return answerFields(p, &a, p.brief) })
	if err != nil {
		return Answer[Brief]{}, err
	}
	return a, nil
}

func (p *parser) brief(j *Brief) error {
	return p.fields(
		field{"ID", func() error { return p.str(&j.ID) }},
		field{"UniqueKey", func() error { return p.str(&j.UniqueKey) }},
		field{"State", func() error { return p.str((*string)(&j.State)) }},
	)
}

// answerFields are an Answer's fields, its job read with job.
func answerFields[J any](p *parser, a *Answer[J], job func(*J) error) []field {
	return []field{
		{"Declined", func() error { return p.str(&a.Declined) }},
		{"Unknown", func() error { return p.boolean(&a.Unknown) }},
		{"Outcome", func() error { return p.str((*string)(&a.Outcome)) }},
		{"Job", func() error { return job(&a.Job) }},
	}
}

// parseLine reads line, an object (or null), with the fields fields
// gives for its parser.
func parseLine(line []byte, fields func(p *parser) []field) error {
	p := &parser{b: line}
	p.space()
	if err := p.fields(fields(p)...); err != nil {
		return err
	}
	if p.space(); p.i != len(p.b) {
		return errSyntax
	}
	return nil
}

// field is one field of an object: its name, and what reads its value.
type field struct {
	name string
	read func() error
}

// fields reads an object (null leaves it): each key's value with the
// reader of the field it names, as encoding/json matches names (case
// aside), and skips the others.
func (p *parser) fields(fs ...field) error {
	if p.null() {
		return nil
	}
	if p.peek() != '{' {
		return p.mismatch()
	}
	return p.object(func(key []byte) error {
		for _, f := range fs {
			if bytes.EqualFold(key, []byte(f.name)) {
				return f.read()
			}
		}
		return p.skip()
	})
}

var (
	errSyntax   = errors.New("invalid answer: bad JSON")
	errMismatch = errors.New("invalid answer: a value of another type")
)

// maxDepth is encoding/json's bound on nesting.
const maxDepth = 10000

// parser reads JSON values from b at i, as encoding/json's scanner
// accepts them.
type parser struct {
	b     []byte
	i     int
	depth int
}

func (p *parser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// literal takes word at i, if it is there.
func (p *parser) literal(word string) bool {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

func (p *parser) null() bool { return p.literal("null") }

// mismatch is the error of a value of another type than its field's,
// once the value is known to be valid JSON: encoding/json reports a
// syntax error first.
func (p *parser) mismatch() error {
	if err := p.skip(); err != nil {
		return err
	}
	return errMismatch
}

// object reads an object, calling field for each key with p at its value;
// field must take the value.
func (p *parser) object(field func(key []byte) error) error {
	if p.peek() != '{' {
		return errSyntax
	}
	if p.depth++; p.depth > maxDepth {
		return errSyntax
	}
	p.i++
	p.space()
	if p.peek() == '}' {
		p.i++
		p.depth--
		return nil
	}
	for {
		p.space()
		raw, err := p.quoted()
		if err != nil {
			return err
		}
		key, _ := unquote(raw)
		p.space()
		if p.peek() != ':' {
			return errSyntax
		}
		p.i++
		p.space()
		if err := field(key); err != nil {
			return err
		}
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			p.depth--
			return nil
		default:
			return errSyntax
		}
	}
}

// str reads a string (or null, which leaves *s) into *s.
func (p *parser) str(s *string) error {
	if p.null() {
		return nil
	}
	if p.peek() != '"' {
		return p.mismatch()
	}
	raw, err := p.quoted()
	if err != nil {
		return err
	}
	v, _ := unquote(raw)
	*s = string(v)
	return nil
}

func (p *parser) boolean(v *bool) error {
	switch {
	case p.null():
	case p.literal("true"):
		*v = true
	case p.literal("false"):
		*v = false
	default:
		return p.mismatch()
	}
	return nil
}

// skip takes any one value.
func (p *parser) skip() error {
	switch c := p.peek(); {
	case c == '{':
		return p.object(func([]byte) error { return p.skip() })
	case c == '[':
		return p.array()
	case c == '"':
		_, err := p.quoted()
		return err
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	case p.literal("true"), p.literal("false"), p.null():
		return nil
	}
	return errSyntax
}

func (p *parser) array() error { return p.elements(p.skip) }

// elements reads an array (p at its '['), calling element for each value
// with p at it; element must take the value.
func (p *parser) elements(element func() error) error {
	if p.depth++; p.depth > maxDepth {
		return errSyntax
	}
	p.i++ // [
	p.space()
	if p.peek() == ']' {
		p.i++
		p.depth--
		return nil
	}
	for {
		p.space()
		if err := element(); err != nil {
			return err
		}
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			p.depth--
			return nil
		default:
			return errSyntax
		}
	}
}

// number takes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() error {
	digits := func() int {
		n := 0
		for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.peek() == '-' {
		p.i++
	}
	switch c := p.peek(); {
	case c == '0':
		p.i++
	case '1' <= c && c <= '9':
		digits()
	default:
		return errSyntax
	}
	if p.peek() == '.' {
		p.i++
		if digits() == 0 {
			return errSyntax
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if digits() == 0 {
			return errSyntax
		}
	}
	return nil
}

// quoted takes a string and returns it with its quotes, checked as
// encoding/json's scanner checks it: no control characters, only JSON's
// escapes.
func (p *parser) quoted() ([]byte, error) {
	if p.peek() != '"' {
		return nil, errSyntax
	}
	start := p.i
	for p.i++; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return p.b[start:p.i], nil
		case c < 0x20:
			return nil, errSyntax
		case c == '\\':
			p.i++
			if p.i >= len(p.b) {
				return nil, errSyntax
			}
			switch p.b[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if getu4(p.b[p.i-1:]) < 0 {
					return nil, errSyntax
				}
				p.i += 4
			default:
				return nil, errSyntax
			}
		}
	}
	return nil, errSyntax
}

// getu4 and unquote are encoding/json's (decode.go), for strings quoted
// checked: invalid UTF-8 and lone surrogates read as U+FFFD.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

func unquote(s []byte) (t []byte, ok bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return
	}
	s = s[1 : len(s)-1]
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return s, true
	}
	b := make([]byte, len(s)+2*utf8.UTFMax)
	w := copy(b, s[0:r])
	for r < len(s) {
		if w >= len(b)-2*utf8.UTFMax {
			nb := make([]byte, (len(b)+utf8.UTFMax)*2)
			copy(nb, b[0:w])
			b = nb
		}
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return
			}
			switch s[r] {
			default:
				return
			case '"', '\\', '/', '\'':
				b[w] = s[r]
				r++
				w++
			case 'b':
				b[w] = '\b'
				r++
				w++
			case 'f':
				b[w] = '\f'
				r++
				w++
			case 'n':
				b[w] = '\n'
				r++
				w++
			case 'r':
				b[w] = '\r'
				r++
				w++
			case 't':
				b[w] = '\t'
				r++
				w++
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						w += utf8.EncodeRune(b[w:], dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				w += utf8.EncodeRune(b[w:], rr)
			}
		case c == '"', c < ' ':
			return
		case c < utf8.RuneSelf:
			b[w] = c
			r++
			w++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			w += utf8.EncodeRune(b[w:], rr)
		}
	}
	return b[0:w], true
}

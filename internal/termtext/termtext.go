// Package termtext turns the bytes a job wrote for a terminal into text to
// show elsewhere: on the dashboard's page, or quoted in queuectl's own
// messages. The raw logs keep them as written.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Plain returns log text as a reader should see it, on a page or quoted
// in a message: terminal escape sequences
// (colours, cursor moves, window titles) and every other control character
// removed, tabs and newlines kept, a carriage return made a newline. A browser would show them as
// boxes or nothing, a log full of colour codes reads as noise, and on a
// terminal they would act: a quoted line that clears the screen or leaves
// the colour red, a progress bar whose first state hides its last.
func Plain(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			i, _ = EscapeEnd(s, i)
			continue
		}
		if c == '\r' { // CRLF is a newline; a lone CR (a progress bar) starts one
			if i+1 == len(s) || s[i+1] != '\n' {
				b.WriteByte('\n')
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if c != '\n' && c != '\t' && (c < 0x20 || c == 0x7f || (r >= 0x80 && r <= 0x9f)) {
			i += size
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// clean reports whether s has nothing Plain would remove.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f) {
			return false
		}
	}
	return true
}

// EscapeEnd returns where the escape sequence starting at s[i] (an ESC)
// ends, and whether it is complete: CSI (ESC [ … final byte), strings
// (OSC ESC ] and DCS, SOS, PM, APC, ended by BEL or ESC \), and the
// short ESC forms (ESC, intermediate bytes, a final byte). An incomplete
// one ends at len(s).
func EscapeEnd(s string, i int) (end int, complete bool) {
	j := i + 1
	if j >= len(s) {
		return len(s), false
	}
	switch s[j] {
	case '[':
		j++
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
			j++
		}
		if j >= len(s) {
			return len(s), false
		}
		if s[j] >= 0x40 && s[j] <= 0x7e {
			return j + 1, true
		}
		return j, true // malformed: drop what was read
	case ']', 'P', 'X', '^', '_':
		for k := j + 1; k < len(s); k++ {
			if s[k] == 0x07 {
				return k + 1, true
			}
			if s[k] == 0x1b && k+1 < len(s) && s[k+1] == '\\' {
				return k + 2, true
			}
		}
		return len(s), false
	}
	for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
		j++
	}
	if j >= len(s) {
		return len(s), false
	}
	return j + 1, true
}

package serve

import (
	"strings"
	"unicode/utf8"
)

// plain returns log text as a page shows it: terminal escape sequences
// (colours, cursor moves, window titles) and every other control character
// removed, tabs and newlines kept, a carriage return made a newline. A browser would show them as boxes or
// nothing, and a log full of colour codes reads as noise. The raw log
// (/jobs/ID/runs/N/stdout) keeps them.
func plain(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			i, _ = escapeEnd(s, i)
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

// clean reports whether s has nothing plain would remove.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f) {
			return false
		}
	}
	return true
}

// escapeEnd returns where the escape sequence starting at s[i] (an ESC)
// ends, and whether it is complete: CSI (ESC [ … final byte), strings
// (OSC ESC ] and DCS, SOS, PM, APC, ended by BEL or ESC \), and the
// short ESC forms (ESC, intermediate bytes, a final byte). An incomplete
// one ends at len(s).
func escapeEnd(s string, i int) (end int, complete bool) {
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

// maxEscape bounds how much of an unfinished escape sequence at the end of
// a piece of live log waits for the rest: a longer one is no sequence a
// terminal program writes, and goes out as it is.
const maxEscape = 4 << 10

// escapeCut returns how much of b to send now: all of it, or up to an
// escape sequence at its end that is not complete yet (the rest comes with
// the next piece, and plain removes it whole), or a CR at its end.
func escapeCut(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return len(b) - 1 // a CR's newline waits to see whether an LF follows
	}
	from := max(0, len(b)-maxEscape)
	i := strings.LastIndexByte(string(b[from:]), 0x1b)
	if i < 0 {
		return len(b)
	}
	i += from
	if _, complete := escapeEnd(string(b), i); complete {
		return len(b)
	}
	return i
}

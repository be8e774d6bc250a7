// Package jsonstr writes a JSON string as encoding/json writes it, for the
// hand-written encoders of the hot paths (a job list's rows, the front's
// request), which must give encoding/json's bytes without its reflection.
// It imports nothing but unicode/utf8, so the front may link it.
package jsonstr

import "unicode/utf8"

const hex = "0123456789abcdef"

// Append appends s quoted as encoding/json quotes a string: `"` and `\`
// and control characters escaped (short forms for \b \f \n \r \t), invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped, and with html also <, > and &
// as \u00XX (json.Marshal's default; an Encoder's SetEscapeHTML(false)
// drops it).
func Append(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

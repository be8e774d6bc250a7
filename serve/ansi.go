package serve

import (
	"strings"

	"github.com/queuectl/queuectl/internal/termtext"
)

// maxEscape bounds how much of an unfinished escape sequence at the end of
// a piece of live log waits for the rest: a longer one is no sequence a
// terminal program writes, and goes out as it is.
const maxEscape = 4 << 10

// escapeCut returns how much of b to send now: all of it, or up to an
// escape sequence at its end that is not complete yet (the rest comes with
// the next piece, and termtext.Plain removes it whole), or a CR at its end.
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
	if _, complete := termtext.EscapeEnd(string(b), i); complete {
		return len(b)
	}
	return i
}

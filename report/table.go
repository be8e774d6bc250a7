package report

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// none fills a table cell that has no value, so every row has the same
// number of words for awk and cut.
const none = "-"

// writeTable renders a borderless table in the style of ps and kubectl:
// header first, left-aligned, columns separated by three spaces, cells
// never wrapped (a wrapped cell would split one record over lines), and no
// trailing blanks. Cell widths are measured in display cells without ANSI
// codes, so coloured and wide cells align.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	t := newTable(w, header, len(rows))
	for _, r := range rows {
		if err := t.row(r); err != nil {
			return err
		}
	}
	return t.flush()
}

// table writes rows as they come. It holds back the first rows, up to
// hold of them, to size the columns, then writes every later row at once
// with those widths: a later cell wider than its column pushes the rest of
// its own row right, and no row waits for the end of the data. writeTable
// holds every row, so a small table is sized exactly.
//
// This renderer replaced tablewriter: its package initialisation alone
// (width tables, a regexp, a preallocated cache) cost every queuectl
// command about 2 ms of CPU and 200 page faults, `enqueue` included, and
// it needs every row in memory before it writes the first.
type table struct {
	w      io.Writer
	buf    []byte
	widths []int
	held   [][]string
	hold   int // rows still to hold back; -1 once the held rows are written
}

func newTable(w io.Writer, header []string, hold int) *table {
	t := &table{w: w, hold: hold, widths: make([]int, len(header))}
	t.held = append(t.held, header)
	t.measure(header)
	return t
}

func (t *table) measure(cells []string) {
	for i, c := range cells {
		if i < len(t.widths) {
			t.widths[i] = max(t.widths[i], cellWidth(c))
		}
	}
}

// row adds one row; it may write it, and the held rows, at once.
func (t *table) row(cells []string) error {
	if t.hold > 0 {
		t.held = append(t.held, cells)
		t.measure(cells)
		t.hold--
		return nil
	}
	if t.hold == 0 {
		if err := t.writeHeld(); err != nil {
			return err
		}
	}
	return t.write(cells)
}

// flush writes what is held back. Call it once, after the last row.
func (t *table) flush() error {
	if t.hold >= 0 {
		return t.writeHeld()
	}
	return nil
}

func (t *table) writeHeld() error {
	t.hold = -1
	for _, r := range t.held {
		if err := t.write(r); err != nil {
			return err
		}
	}
	t.held = nil
	return nil
}

func (t *table) write(cells []string) error {
	b := t.buf[:0]
	pad := 0
	for i, c := range cells {
		if i > 0 {
			b = appendSpaces(b, pad+3)
		}
		b = append(b, c...)
		if i < len(t.widths) {
			pad = max(t.widths[i]-cellWidth(c), 0)
		}
	}
	for len(b) > 0 && b[len(b)-1] == ' ' { // an empty last cell
		b = b[:len(b)-1]
	}
	b = append(b, '\n')
	t.buf = b
	if _, err := t.w.Write(b); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

func appendSpaces(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

// oneLine makes s safe for a single table cell or `key: value` line:
// newlines become ⏎ and other control characters (tabs, escape sequences
// from a hostile command) become spaces, so nothing can break the layout
// or drive the terminal.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return '⏎'
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
}

// clip shortens s to max display cells, ending in … when cut, measuring
// the way the table does.
func clip(s string, max int) string {
	if cellWidth(s) <= max {
		return s
	}
	n, end := 0, 0
	for i, r := range s {
		w := runeWidth(r)
		if n+w > max-1 {
			break
		}
		n, end = n+w, i+utf8.RuneLen(r)
	}
	return s[:end] + "…"
}

// cellWidth is the number of terminal cells s takes, ANSI escape
// sequences (the colours of state words) not counted.
func cellWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' { // CSI: ESC [ parameters final-byte
			i += 2
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++
			}
			i++
			continue
		}
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeWidth(r)
		i += size
	}
	return n
}

// runeWidth is 0 for combining marks and format characters, 2 for East
// Asian wide and fullwidth characters and emoji, 1 for the rest.
func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	for _, w := range wideRanges {
		if r < w[0] {
			return 1
		}
		if r <= w[1] {
			return 2
		}
	}
	return 1
}

// wideRanges are the East Asian Wide (W) and Fullwidth (F) blocks of
// Unicode's EastAsianWidth.txt, coarsened to whole blocks, in order.
var wideRanges = [...][2]rune{
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0},
	{0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F},
	{0x2693, 0x2693}, {0x26A1, 0x26A1}, {0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5},
	{0x26CE, 0x26CE}, {0x26D4, 0x26D4}, {0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5},
	{0x26FA, 0x26FA}, {0x26FD, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728},
	{0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
	{0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},
	{0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19}, {0xFE30, 0xFE6F},
	{0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF},
	{0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251},
	{0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF},
	{0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
}

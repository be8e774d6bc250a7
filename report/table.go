package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// none fills a table cell that has no value, so every row has the same
// number of words for awk and cut.
const none = "-"

// writeTable renders a borderless table in the style of ps and kubectl:
// header first, left-aligned, columns separated by three spaces, and
// cells never wrapped (a wrapped cell would split one record over lines).
// Cell widths are measured without ANSI codes, so coloured cells align.
//
// The rows are all known, so the columns are sized in one pass over them
// and the lines written to w a chunk at a time: the table is never held
// whole a second time, and a reader gone away (EPIPE) ends it at the
// next chunk. A table with a cell only tablewriter lays out (see plain)
// goes through tablewriter whole, in the same bytes.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	widths, ok := columnWidths(header, rows)
	if !ok {
		return writeRows(w, header, rows)
	}
	buf := make([]byte, 0, tableChunk+1024)
	if header != nil {
		buf = appendLine(buf, header, widths)
	}
	for _, r := range rows {
		buf = appendLine(buf, r, widths)
		if len(buf) >= tableChunk {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := w.Write(buf)
	return err
}

// tableChunk is how many bytes of a table writeTable gathers before a
// write: a pipe's buffer, few syscalls, and little memory.
const tableChunk = 64 << 10

// appendRows appends rows laid out as writeTable lays them out, with the
// header row first when header is not nil: a streamed table's later
// blocks have none.
func appendRows(dst []byte, header []string, rows [][]string) ([]byte, error) {
	widths, ok := columnWidths(header, rows)
	if !ok {
		out := bytes.NewBuffer(dst)
		err := writeRows(out, header, rows)
		return out.Bytes(), err
	}
	if header != nil {
		dst = appendLine(dst, header, widths)
	}
	for _, r := range rows {
		dst = appendLine(dst, r, widths)
	}
	return dst, nil
}

// columnWidths sizes the columns of header and rows as tablewriter does
// for writeRows: the widest cell of each, measured by tablewriter's own
// width function after tablewriter's trim of blanks, at least 1. It
// reports false when some cell is not plain, or a row's length differs
// from the others', which only tablewriter lays out.
//
// Laying out plain cells here and not through tablewriter is the speed of
// a long list: tablewriter takes 35-60 µs and 207 allocations a row of
// the job list (cells copied, split into lines, measured and padded over
// and over, the table buffered whole), this layout 0.3 µs and none
// (BenchmarkTableRows). Cells that are not plain are rare (a tab or a
// line break in a label); a table with one goes through tablewriter.
// tablewriter's own streaming mode (WithStreaming, Start, Append, Close)
// is no way out: it fixes the widths before the first row (from the
// header, that row plus a margin, or widths given), cuts wider cells, and
// lays out each row with the same per-cell work as a whole table.
func columnWidths(header []string, rows [][]string) ([]int, bool) {
	n := len(header)
	if header == nil && len(rows) > 0 {
		n = len(rows[0])
	}
	widths := make([]int, n)
	measure := func(cells []string) bool {
		if len(cells) != n {
			return false
		}
		for i, c := range cells {
			w, ok := plain(c)
			if !ok {
				return false
			}
			widths[i] = max(widths[i], w, 1)
		}
		return true
	}
	if header != nil && !measure(header) {
		return nil, false
	}
	for _, r := range rows {
		if !measure(r) {
			return nil, false
		}
	}
	return widths, true
}

// plain returns the display width of cell c once trimmed of blanks, as
// tablewriter measures it, and whether tablewriter would show it as that
// trimmed string on one line: no line break, no tab (tablewriter expands
// those to a width it reads from the environment), no control character
// but the ESC of an ANSI colour (CSI) sequence, valid UTF-8.
func plain(c string) (int, bool) {
	c, ascii := trimCell(c)
	if ascii {
		return len(c), true
	}
	if !utf8.ValidString(c) {
		return 0, false
	}
	for i, r := range c {
		if r == 0x1b {
			if !csiAt(c, i) {
				return 0, false
			}
		} else if unicode.IsControl(r) {
			return 0, false
		}
	}
	return twwidth.Width(c), true
}

// trimCell is c without leading and trailing blanks, as tablewriter shows
// a cell (strings.TrimSpace), and whether it is printable ASCII, whose
// width is its length.
func trimCell(c string) (string, bool) {
	if !printableASCII(c) {
		return strings.TrimSpace(c), false
	}
	if len(c) > 0 && (c[0] == ' ' || c[len(c)-1] == ' ') {
		c = strings.TrimSpace(c)
	}
	return c, true
}

// csiAt reports whether a whole CSI sequence (ESC [ parameters,
// intermediates, final byte) starts at s[i], the form twwidth leaves out
// of a width.
func csiAt(s string, i int) bool {
	if i+1 >= len(s) || s[i+1] != '[' {
		return false
	}
	j := i + 2
	for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
		j++
	}
	for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
		j++
	}
	return j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e
}

// appendLine appends one line of plain cells, each but the last padded to
// its column's width and followed by columnGap, without trailing blanks
// (trimLines).
func appendLine(dst []byte, cells []string, widths []int) []byte {
	start := len(dst)
	for i, c := range cells {
		c, ascii := trimCell(c)
		dst = append(dst, c...)
		if i == len(cells)-1 {
			break
		}
		w := len(c)
		if !ascii {
			w = twwidth.Width(c)
		}
		for range widths[i] - w {
			dst = append(dst, ' ')
		}
		dst = append(dst, columnGap...)
	}
	end := len(dst)
	for end > start && dst[end-1] == ' ' {
		end--
	}
	return append(dst[:end], '\n')
}

// The width cache of tablewriter (an LRU of 8,192 strings) is off: a table
// is rendered once, so it hits only on repeated cells, and a list of a
// million ids misses on every one, paying an eviction each time. Measured
// on a list, rendering took 32 µs a row with the cache and 18 µs without.
func init() { twwidth.SetCacheCapacity(0) }

// columnGap separates columns. It is the column separator and not the
// cells' right padding: tablewriter repeats a padding string to fill a
// cell, so a three-space padding overshoots the width and every cell was
// truncated back to it, a quarter of a list's rendering time.
const columnGap = "   "

// writeRows renders rows through tablewriter, as writeTable lays them
// out, with the header row first when header is not nil. It is the layout
// of the cells that are not plain, and the reference the tests hold
// writeTable's own layout to.
func writeRows(w io.Writer, header []string, rows [][]string) error {
	var buf bytes.Buffer
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbolCustom("plain").WithColumn(columnGap),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.On, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithPadding(tw.Padding{Overwrite: true}),
	)
	if header != nil {
		t.Header(header)
	}
	if err := t.Bulk(rows); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	_, err := io.WriteString(w, trimLines(buf.String()))
	return err
}

// streamBlock is how many rows of a streamed table (JobStream) are laid
// out together, each block sized on its own rows, as kubectl does with
// --chunk-size: memory stays at a few blocks, and the first rows show at
// once. A table of one block reads exactly as writeTable's.
const streamBlock = 1000

// trimLines drops trailing blanks: tablewriter pads the last column to its
// width, which shows up as noise in diffs, golden files and copy-paste.
func trimLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, "\n") {
			lines[i] = strings.TrimRight(l, " \t\n") + "\n"
		}
	}
	return strings.Join(lines, "")
}

// oneLine makes s safe for a single table cell or `key: value` line:
// newlines become ⏎ and other control characters (tabs, escape sequences
// from a hostile command) become spaces, so nothing can break the layout
// or drive the terminal.
func oneLine(s string) string {
	if printableASCII(s) {
		return s
	}
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
	if len(s) <= max && printableASCII(s) || twwidth.Width(s) <= max {
		return s
	}
	return twwidth.Truncate(s, max-1) + "…"
}

// printableASCII reports whether s is all printable ASCII, one cell a
// byte: the common cell, which needs no replacing and no measuring.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

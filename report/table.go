package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"

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
func writeTable(w io.Writer, header []string, rows [][]string) error {
	return writeRows(w, header, rows)
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

// writeRows renders rows as writeTable does, with the header row first
// when header is not nil: a streamed table's later blocks have none.
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

package report

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// tableHeader heads the tables of these tests.
var tableHeader = []string{"ID", "STATE", "NAME", "EMPTY", "LABEL", "COMMAND"}

// awkwardRows are cells whose layout is easy to get wrong: wide (CJK,
// emoji), zero-width (combining), coloured, empty, padded with blanks, a
// tab, a line break, and a column that is empty in every row.
var awkwardRows = [][]string{
	{"job-1", "\x1b[32mcompleted\x1b[0m", "日本語", "", "-", "echo 日本語"},
	{"job-22", "pending", "e\u0301te\u0301", "", "  padded  ", "printf 'a\tb'"},
	{"j", "\x1b[31mdead\x1b[0m", "🚀 go", "", "x", "two\nlines"},
	{"ｗｉｄｅ", "failed", "-", "", "", ""},
}

// plainRows are awkwardRows without the tab and the line break: every
// cell is plain, so writeTable lays them out itself.
var plainRows = [][]string{
	{"job-1", "\x1b[32mcompleted\x1b[0m", "日本語", "", "-", "echo 日本語"},
	{"job-22", "pending", "e\u0301te\u0301", "", "  padded  ", "printf 'a b' ± → …⏎"},
	{"j", "\x1b[31mdead\x1b[0m", "🚀 go", "", "x\u00a0", "two⏎lines"},
	{"ｗｉｄｅ", "failed", "-", "", "", ""},
}

// TestTableLayout pins the bytes of small tables, which are tablewriter's
// (writeRows) whether writeTable lays them out itself (plain) or hands
// them to tablewriter (awkward): a list of a few jobs reads as it always
// has.
func TestTableLayout(t *testing.T) {
	for _, tt := range []struct {
		name  string
		rows  [][]string
		plain bool
	}{{"awkward", awkwardRows, false}, {"plain", plainRows, true}} {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := columnWidths(tableHeader, tt.rows); ok != tt.plain {
				t.Errorf("columnWidths says plain %v, want %v", ok, tt.plain)
			}
			var buf bytes.Buffer
			if err := writeTable(&buf, tableHeader, tt.rows); err != nil {
				t.Fatal(err)
			}
			golden(t, buf.Bytes())
			var want bytes.Buffer
			if err := writeRows(&want, tableHeader, tt.rows); err != nil {
				t.Fatal(err)
			}
			if buf.String() != want.String() {
				t.Errorf("writeTable =\n%s\ntablewriter lays it out\n%s", buf.String(), want.String())
			}
		})
	}
}

// cellParts are what random cells are made of: every kind of text a
// table meets, plain or not.
var cellParts = []string{"", "a", "job-42", "-", " ", "  ", "\t", "\n", "\r", "日本", "ｗ", "🚀", "👩‍💻",
	"e\u0301", "\u200b", "±", "→", "…", "⏎", "\u00a0", "\u0085", "\x1b[31m", "\x1b[0m", "\x1b[2J",
	"\x1b", "\x1b]0;t\x07", "\x7f", "\xff", "Ω", "한"}

// TestTableMatchesTablewriter lays out random tables both ways: writeTable
// and appendRows must write what tablewriter writes, byte for byte, for
// plain cells and for the others (which they hand to tablewriter), also
// where a CJK locale makes ambiguous characters (±, →, …) two cells wide.
func TestTableMatchesTablewriter(t *testing.T) {
	defer twwidth.SetEastAsian(twwidth.IsEastAsian())
	for _, eastAsian := range []bool{false, true} {
		t.Run(fmt.Sprintf("eastAsian=%v", eastAsian), func(t *testing.T) {
			twwidth.SetEastAsian(eastAsian)
			if w := twwidth.Width("±"); w != map[bool]int{false: 1, true: 2}[eastAsian] {
				t.Fatalf("Width(±) = %d: the locale's widths are not what this test means", w)
			}
			matchRandomTables(t)
		})
	}
}

func matchRandomTables(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cell := func() string {
		var b strings.Builder
		for range r.IntN(4) {
			b.WriteString(cellParts[r.IntN(len(cellParts))])
		}
		return b.String()
	}
	plain := 0
	for round := range 3000 {
		cols, n := 1+r.IntN(5), r.IntN(6)
		var header []string
		if round%3 != 0 {
			header = make([]string, cols)
			for i := range header {
				header[i] = cell()
			}
		}
		rows := make([][]string, n)
		for i := range rows {
			rows[i] = make([]string, cols)
			for k := range rows[i] {
				if r.IntN(3) > 0 { // mostly ASCII, so that most tables are plain
					rows[i][k] = []string{"", "x", "job-1", "pending", " a "}[r.IntN(5)]
				} else {
					rows[i][k] = cell()
				}
			}
		}
		if _, ok := columnWidths(header, rows); ok {
			plain++
		}
		var want, got bytes.Buffer
		if err := writeRows(&want, header, rows); err != nil {
			t.Fatal(err)
		}
		if err := writeTable(&got, header, rows); err != nil {
			t.Fatal(err)
		}
		appended, err := appendRows([]byte("before\n"), header, rows)
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() || string(appended) != "before\n"+want.String() {
			t.Fatalf("header %q rows %q:\nwriteTable  %q\nappendRows  %q\ntablewriter %q",
				header, rows, got.String(), appended, want.String())
		}
	}
	if plain < 500 {
		t.Errorf("%d of 3000 random tables plain: the test hardly checks the layout of plain cells", plain)
	}
}

// A table longer than a chunk is written in chunks, and ends at the
// first failed write (`queuectl dlq list | head`), returning its error.
func TestTableStopsAtWriteError(t *testing.T) {
	rows := make([][]string, 10000)
	for i := range rows {
		rows[i] = []string{"job", "pending", "echo hi"}
	}
	w := &failingWriter{ok: 1}
	if err := writeTable(w, []string{"ID", "STATE", "COMMAND"}, rows); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("writeTable = %v, want EPIPE", err)
	}
}

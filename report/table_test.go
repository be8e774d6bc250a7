package report

import (
	"bytes"
	"testing"
)

// awkwardRows are cells whose layout is easy to get wrong: wide (CJK,
// emoji), zero-width (combining), coloured, empty, padded with blanks, a
// tab, a line break, and a column that is empty in every row.
var awkwardRows = [][]string{
	{"job-1", "\x1b[32mcompleted\x1b[0m", "日本語", "", "-", "echo 日本語"},
	{"job-22", "pending", "e\u0301te\u0301", "", "  padded  ", "printf 'a\tb'"},
	{"j", "\x1b[31mdead\x1b[0m", "🚀 go", "", "x", "two\nlines"},
	{"ｗｉｄｅ", "failed", "-", "", "", ""},
}

// TestTableLayout pins the bytes of a small table: whatever lays it out,
// a list of a few jobs reads as it always has.
func TestTableLayout(t *testing.T) {
	var buf bytes.Buffer
	if err := writeTable(&buf, []string{"ID", "STATE", "NAME", "EMPTY", "LABEL", "COMMAND"}, awkwardRows); err != nil {
		t.Fatal(err)
	}
	golden(t, buf.Bytes())
}

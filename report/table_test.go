package report

import (
	"bytes"
	"testing"
)

func TestCellWidth(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"日本語", 6}, {"\x1b[31mdead\x1b[0m", 4}, {"e\u0301", 1}, {"🙂!", 3}, {"⏎", 1},
	} {
		if got := cellWidth(tc.s); got != tc.want {
			t.Errorf("cellWidth(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"}, {"exactly10!", 10, "exactly10!"}, {"a bit too long", 10, "a bit too…"},
		{"日本語日本語", 6, "日本…"},
	} {
		if got := clip(tc.s, tc.max); got != tc.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
		}
	}
}

// A streamed table sizes its columns from the rows it holds back, and
// writes later rows at once: a wider cell pushes only its own row.
func TestTableStreamsAfterHeldRows(t *testing.T) {
	var buf bytes.Buffer
	tb := newTable(&buf, []string{"ID", "STATE", "COMMAND"}, 2)
	for _, r := range [][]string{{"a", "pending", "true"}, {"bb", "dead", "false"}} {
		if err := tb.row(r); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 {
		t.Fatalf("wrote %q before the held rows were complete", buf.String())
	}
	if err := tb.row([]string{"ccc", "completed", "echo"}); err != nil {
		t.Fatal(err)
	}
	written := buf.Len()
	if err := tb.row([]string{"d", "failed", ""}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() == written {
		t.Fatal("a row after the held ones was not written at once")
	}
	if err := tb.flush(); err != nil {
		t.Fatal(err)
	}
	want := "ID   STATE     COMMAND\n" +
		"a    pending   true\n" +
		"bb   dead      false\n" +
		"ccc   completed   echo\n" +
		"d    failed\n"
	if buf.String() != want {
		t.Errorf("table =\n%s\nwant\n%s", buf.String(), want)
	}
}

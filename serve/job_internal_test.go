package serve

import "testing"

func TestRuneStart(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"abc", 3},
		{"ab\xc3\xa9", 4},     // é whole
		{"ab\xc3", 2},         // é cut after its first byte
		{"ab\xe2\x82", 2},     // € cut after two of three
		{"ab\xe2\x82\xac", 5}, // € whole
		{"\x82\x82", 2},       // no character starts: as it is
		{"", 0},
	} {
		if got := runeStart([]byte(tc.in)); got != tc.want {
			t.Errorf("runeStart(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestEscapeCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"abc", 3},
		{"ab\x1b[31mc", 8},
		{"ab\x1b[3", 2},
		{"ab\x1b", 2},
		{"ab\x1b]0;title", 2},
		{"ab\x1b]0;title\x07", 12},
		{"ab\r", 2},
	} {
		if got := escapeCut([]byte(tc.in)); got != tc.want {
			t.Errorf("escapeCut(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

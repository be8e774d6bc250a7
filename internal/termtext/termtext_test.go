package termtext

import "testing"

func TestPlain(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\n\twith tab", "plain text\n\twith tab"},
		{"\x1b[1;31mred\x1b[0m", "red"},
		{"\x1b]0;title\x07after", "after"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1b(Bcharset", "charset"},
		{"bar 50%\rbar 100%\r\n", "bar 50%\nbar 100%\n"},
		{"a\bb\x00c\x7fd", "abcd"},
		{"c1 \u009b31m here é", "c1 31m here é"},
		{"cut \x1b[3", "cut "},
		{"cut \x1b]0;ti", "cut "},
	} {
		if got := Plain(tc.in); got != tc.want {
			t.Errorf("Plain(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

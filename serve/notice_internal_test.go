package serve

import (
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"
)

// TestNotices: the key goes into the URL beside its query; the lines stay
// for every read (a reload) until noticeLife has passed, or keepNotices
// newer ones pushed them out; no lines, no key.
func TestNotices(t *testing.T) {
	var n notices
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if got := n.add("/jobs/d", nil, at); got != "/jobs/d" {
		t.Errorf("add(/jobs/d, no lines) = %q, want it unchanged", got)
	}
	lines := []string{"job e came back with d: pending, waiting again"}
	back := n.add("/dlq?x=1", lines, at)
	u, err := url.Parse(back)
	if err != nil || u.Path != "/dlq" || u.Query().Get("x") != "1" || u.Query().Get("notice") == "" {
		t.Fatalf("add(/dlq?x=1, lines) = %q (%v), want /dlq with x=1 and a notice key", back, err)
	}
	key := u.Query().Get("notice")
	for _, tc := range []struct {
		name  string
		key   string
		after time.Duration
		want  []string
	}{
		{"read", key, 0, lines},
		{"read again", key, time.Minute, lines},
		{"made up", "MADEUP", 0, nil},
		{"none", "", 0, nil},
		{"too old", key, noticeLife, nil},
	} {
		if got := n.get(tc.key, at.Add(tc.after)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: get(%q, +%v) = %q, want %q", tc.name, tc.key, tc.after, got, tc.want)
		}
	}
	for i := range keepNotices {
		n.add("/jobs/d", []string{fmt.Sprint(i)}, at)
	}
	if got := n.get(key, at); got != nil {
		t.Errorf("get after %d newer notices = %q, want it pushed out", keepNotices, got)
	}
	if len(n.said) != keepNotices || len(n.keys) != keepNotices {
		t.Errorf("notices keeps %d (%d keys), want %d", len(n.said), len(n.keys), keepNotices)
	}
}

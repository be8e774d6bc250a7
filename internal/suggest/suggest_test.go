package suggest

import "testing"

func TestNearest(t *testing.T) {
	names := []string{"enqueue", "list", "logs", "wait", "worker", "state", "json", "newest", "h", "retries", "max-retries"}
	for _, tt := range []struct{ typed, want string }{
		{"enqeue", "enqueue"}, {"enquee", "enqueue"}, {"lsit", "list"}, {"wiat", "wait"},
		{"stat", "state"}, {"jsn", "json"}, {"newst", "newest"}, {"j", "json"}, {"x", ""},
		{"frobnicate", ""}, {"logs", "logs"}, {"wor", "worker"}, {"retry", "retries"}, {"max-retry", "max-retries"},
		{"", ""},
	} {
		if got := Nearest(tt.typed, names); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
	// enqueue's flags: the plural is the last word of one.
	for _, tt := range []struct{ typed, want string }{
		{"retry", "max-retries"}, {"entry", ""}, {"priorty", "priority"},
	} {
		if got := Nearest(tt.typed, []string{"max-retries", "queue", "priority"}); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

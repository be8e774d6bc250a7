package run

import (
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// The pause notice names a resume command that resumes what it says is
// paused, and that resume accepts: it takes one --queue, so two paused
// queues are two commands.
func TestPausedEventNamesResume(t *testing.T) {
	for _, tc := range []struct {
		queues []string
		want   string
	}{
		{[]string{claim.AllQueues}, "paused: every queue; no new job starts there until `queuectl resume` "},
		{[]string{"mail"}, "paused: queue mail; no new job starts there until `queuectl resume --queue mail` "},
		{[]string{"a", "b"}, "paused: queue a, b; no new job starts there until `queuectl resume --queue a && queuectl resume --queue b` "},
	} {
		got := Event{Kind: EventPaused, Queues: tc.queues}.String()
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("Event{EventPaused, %q}.String() = %q, want it to start %q", tc.queues, got, tc.want)
		}
	}
}

package cli

import (
	"strings"
	"testing"
)

// TestJobsNamedTwoWaysAreRefused: a command that takes job ids or a
// --queue / --all, given both, says to give only one, not that it wants
// one (which it was given).
func TestJobsNamedTwoWaysAreRefused(t *testing.T) {
	h := newHome(t)
	for _, tc := range []struct{ args, want string }{
		{"cancel zz --queue zz", "give job ids or --queue, not both"},
		{"cancel", "give job ids or --queue\n"},
		{"dlq retry --all bo", "give job ids or --all, not both"},
		{"wait --all --queue default", "give job ids, --queue Q or --all, only one of them"},
		{"wait x --all", "give job ids, --queue Q or --all, only one of them"},
		{"wait", "give job ids, --queue Q or --all\n"},
		{"restart x --all --state dead", "give job ids, or --all with --state, not both"},
	} {
		_, stderr, code := h.run(strings.Fields(tc.args)...)
		if code != 2 || !strings.Contains(stderr, "queuectl: error: usage: "+tc.want) {
			t.Errorf("queuectl %s: exit %d, stderr:\n%s\nwant 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

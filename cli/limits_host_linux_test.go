package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNoFileAboveTheHostsMaximum: a job whose limits.nofile is above what
// its worker's host allows (the worker's hard limit; fs.nr_open for root)
// cannot start there on any attempt. Its first run says so, with the
// limit and the host's maximum, and the job is dead at once instead of
// spending its retries in vain.
func TestNoFileAboveTheHostsMaximum(t *testing.T) {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
	max := l.Max // the workers this test starts inherit its limits
	if os.Geteuid() == 0 {
		b, err := os.ReadFile("/proc/sys/fs/nr_open")
		if err != nil {
			t.Fatal(err)
		}
		if max, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	h := newHome(t)
	h.must("enqueue", fmt.Sprintf(`{"id": "files", "command": "true", "max_retries": 3, "backoff_base": 1, "limits": {"nofile": %d}}`, max+1))
	h.must("worker", "start", "--drain", "--no-spool")
	j := h.show("files")
	want := fmt.Sprintf("limits.nofile %d is above this host's maximum, %d (", max+1, max)
	if j.State != "dead" || j.Attempts != 1 || !strings.Contains(j.LastError, want) {
		t.Errorf("job with nofile %d over a maximum of %d: %s after %d attempt(s), error %q; want dead after 1, the error saying %q",
			max+1, max, j.State, j.Attempts, j.LastError, want)
	}
}

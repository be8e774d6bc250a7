package run

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// A hook that starts a command in the background and exits 0 succeeded,
// and what it started ends with it, as a job's processes end with the job:
// it held the hook's output open, so that the hook was reported failed a
// second later ("exec: WaitDelay expired before I/O complete") and went on
// running after it.
func TestHookBackgroundChildEndsWithTheHook(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	w := newWorker(t, s)
	var log logLines
	w.Events = func(e Event) { log.logf("%s", e) }
	pidFile := filepath.Join(dir, "child.pid")
	w.Config.Hooks.OnSuccess = `sleep 60 & echo $! > ` + pidFile + `; echo mail sent`
	enqueue(t, s, claim.NewJob{ID: "bg", Command: "true"})
	drain(t, w)

	runs, err := s.Runs(context.Background(), "bg")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Hooks != "on_success ok" {
		t.Errorf("runs of bg: %+v\nwant one, its hook \"on_success ok\"; worker log:\n%s", runs, log.String())
	}
	if logged := log.String(); strings.Contains(logged, "hook failed") {
		t.Errorf("worker log:\n%s\nwant no hook failure: the hook exited 0", logged)
	}
	pid := pidIn(t, pidFile)
	waitFor(t, "the hook's background child to end with the hook", func() bool { return gone(pid) })
}

package run

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// A daemon that leaves its run's process group and environment
// (env -i setsid), so that neither its group nor its QUEUECTL_RUN mark
// names the run, ends with the run all the same while the worker lives:
// by the cgroup it was born in where runs get one (its slot's, or its own
// for a run with a memory limit), else as an orphan adopted by the worker
// that no live run holds.
func TestEnvStrippedDaemonEndsWithItsRun(t *testing.T) {
	for _, mode := range []string{"slot cgroup", "run cgroup", "no cgroup"} {
		t.Run(mode, func(t *testing.T) {
			if mode != "no cgroup" && runCgroup("probe") == "" {
				if os.Getenv("CI") == "true" {
					t.Fatal("no writable cgroup v2 directory here")
				}
				t.Skip("no writable cgroup v2 directory here")
			}
			noRunCgroups = mode == "no cgroup"
			defer func() { noRunCgroups = false }()
			s := mustOpenStore(t)
			w := newWorker(t, s)
			if mode == "run cgroup" {
				w.Config.Limits = claim.Limits{Memory: 1 << 30} // a run with a memory limit gets a cgroup of its own
			}
			daemon := filepath.Join(t.TempDir(), "daemon")
			enqueue(t, s, claim.NewJob{ID: "leaves", Command: "env -i setsid sh -c 'trap \"\" TERM; echo $$ > " + daemon + ".tmp; mv " + daemon + ".tmp " + daemon + "; while :; do sleep 1; done' </dev/null >/dev/null 2>&1 &" +
				" while [ ! -e " + daemon + " ]; do sleep 0.01; done"})
			drain(t, w)
			if j := get(t, s, "leaves"); j.State != claim.Completed {
				t.Fatalf("job leaves: %s (%s), want completed", j.State, j.LastError)
			}
			pid := pidIn(t, daemon)
			waitFor(t, "the env -i setsid daemon to end with its run", func() bool { return gone(pid) })
			if !gone(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
}

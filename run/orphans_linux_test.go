package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// An orphan adopted by a running worker that exits on its own, long after
// the run that left it, is reaped while the worker runs: no zombie stays
// until the worker stops. The periodic pass reads only the main thread's
// children first, where the kernel puts orphans; this holds it to that.
func TestAdoptedOrphanReapedWhileRunning(t *testing.T) {
	defer becomeSubreaper()()
	w := &Worker{id: "reap-test"}
	defer w.reapLeftBehind()()
	out, err := exec.Command("/bin/sh", "-c", "sleep 0.3 </dev/null >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("pid of the orphan: %q", out)
	}
	waitFor(t, "the orphan to be adopted", func() bool {
		p, ok := readProc(pid)
		return !ok || p.ppid == os.Getpid()
	})
	waitFor(t, "the adopted orphan to be reaped once it exited", func() bool {
		_, ok := readProc(pid)
		return !ok
	})
}

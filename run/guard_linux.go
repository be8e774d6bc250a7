package run

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// The guard. A worker that dies (kill -9, the OOM killer) takes its job
// shells with it (Pdeathsig), but not what they started: a job's command
// runs in a child of its shell, and Pdeathsig is not inherited. Those
// processes would run on, in the run's process group, until a worker of
// this host started again and reaped the run; meanwhile the run's lease
// lapses and a worker of another host runs the job again, beside them
// (SPEC §6: never on two hosts at once).
//
// So each worker process starts one guard: a shell of its own, in a
// process group and with no Pdeathsig of its own, that reads on a pipe the
// process groups of the runs as they start ("+ PGID") and end ("- PGID").
// The worker holds the pipe's other end and nobody else does (close on
// exec); when the worker process is gone, however it went, the guard reads
// EOF and kills every group still listed, then exits. A worker that ends
// in order has ended its runs first: the list is empty. What left its
// run's group (setsid) escapes the guard; the next worker of the host
// finds it by its QUEUECTL_RUN mark (reaper.go).
//
// It is a shell, not this program again: it costs a process per worker
// (not per run), needs nothing of this program's, and a shell ignoring
// the terminal's signals is all it must be.
const guardScript = `trap '' INT HUP QUIT TERM PIPE
groups=
while read -r op g; do
	case $op in
	+) groups="$groups $g" ;;
	-) left=; for x in $groups; do [ "$x" = "$g" ] || left="$left $x"; done; groups=$left ;;
	esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done`

// guardShell runs the guard (a test makes it one that cannot start).
var guardShell = "/bin/sh"

// guard is this process's guard: started with the first run, and again
// after a write to it failed (it was killed), told then of every live run.
var guard struct {
	mu sync.Mutex
	p  *guardProc // nil: none running
}

// guardGroup tells the guard that run group pgid started (add) or ended.
// Callers hold liveRuns.mu, so the guard's list follows liveRuns in order.
// It reports whether a guard holds the group now (add) or let it go.
func guardGroup(pgid int, add bool, live func() []int) bool {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if guard.p != nil {
		if guard.p.tell(pgid, add) == nil {
			return true
		}
		guard.p.abandon()
		guard.p = nil
	}
	if !add {
		return true // a new guard is told only of live runs
	}
	p, err := startGuard()
	if err != nil {
		return false // no guard: the run's start is recorded before it runs, for the next worker of this host
	}
	guard.p = p
	held := true
	for _, g := range live() { // pgid among them
		if p.tell(g, true) != nil {
			held = false
		}
	}
	return held
}

// guardProc is a running guard and the pipe to it.
type guardProc struct {
	w   io.WriteCloser
	cmd *exec.Cmd
}

// startGuard starts a guard: stdin a pipe from this process, stdout and
// stderr nowhere, in a process group of its own (a Ctrl-C at the worker's
// terminal is not for it), with no QUEUECTL_RUN mark (no run's cleanup
// stops it).
func startGuard() (*guardProc, error) {
	cmd := exec.Command(guardShell, "-c", guardScript)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "QUEUECTL_RUN=") })
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// A child this process waits for itself (startChild), not one adopted:
	// the runs' clean-up looks for adopted children, and would find it.
	if err := startChild(cmd); err != nil {
		return nil, err
	}
	return &guardProc{w: w, cmd: cmd}, nil
}

// tell writes one line of the guard's list: "+ PGID" or "- PGID".
func (g *guardProc) tell(pgid int, add bool) error {
	op := '-'
	if add {
		op = '+'
	}
	_, err := fmt.Fprintf(g.w, "%c %d\n", op, pgid)
	return err
}

// close ends the guard as this process's end would: it kills the groups
// still listed, and exits.
func (g *guardProc) close() error {
	g.w.Close()
	return waitChild(g.cmd)
}

// abandon ends a guard that took no line (it was killed, or cannot read):
// killed first, so that closing its pipe cannot make it kill the runs.
func (g *guardProc) abandon() {
	g.cmd.Process.Kill()
	g.w.Close()
	waitChild(g.cmd)
}

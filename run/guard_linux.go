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
	"time"
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
// A worker that lives but does not run (stopped: Ctrl-Z at its terminal,
// SIGSTOP; a debugger) leaves its runs running, each in a process group of
// its own, while their leases lapse unrenewed, and a worker of another
// host takes them for lost and runs the jobs again, beside them. The
// worker's own fence (outage.go) cannot act while it is stopped; the guard
// does: the worker tells it when the leases it holds lapse ("L SECONDS",
// after each renewal, and at a run's start when none is set; "X" when it
// stops, its runs over), and a
// sleeping child of the guard, armed anew at each, signals it (USR1) when
// that time has passed, a second after the lease: the guard then kills
// every group listed, before any other host recovers them (OtherHostGrace
// after the lease). A renewal costs the worker a sleep process, not a run.
//
// It is a shell, not this program again: it costs a process per worker
// (not per run), needs nothing of this program's, and a shell ignoring
// the terminal's signals is all it must be. A read that a signal cut short
// fails in some shells (dash) and is restarted in others (bash): fired
// tells the one from the end of the pipe. The sleeper signals the guard's
// process group, not its pid: the group lives while the sleeper does,
// so its number cannot be another process's by then. A sleeper told again
// is ended by USR2, not TERM, which the guard ignores and so would it until
// its trap is set: one ended before that leaves its sleep to run out, and
// signals nothing.
const guardScript = `trap '' INT HUP QUIT TERM PIPE
groups= sleeper= fired=
lapsed() { for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done; groups= sleeper= fired=1; }
trap lapsed USR1
while :; do
	if ! read -r op g; then
		[ -n "$fired" ] && { fired=; continue; }
		break
	fi
	fired=
	case $op in
	+) groups="$groups $g" ;;
	-) left=; for x in $groups; do [ "$x" = "$g" ] || left="$left $x"; done; groups=$left ;;
	X) [ -n "$sleeper" ] && kill -s USR2 "$sleeper" 2>/dev/null; sleeper= ;;
	L) [ -n "$sleeper" ] && kill -s USR2 "$sleeper" 2>/dev/null
	   ( trap '' USR1; trap 'kill -s KILL $s 2>/dev/null; exit' USR2; sleep "$g" & s=$!; wait $s && kill -s USR1 -- -$$ ) &
	   sleeper=$! ;;
	esac
done
[ -n "$sleeper" ] && kill -s USR2 "$sleeper" 2>/dev/null
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done`

// guardSlack is how long after a lease the guard kills what its worker,
// stopped, did not: after the fence would have, well before another host
// may recover the run (OtherHostGrace).
const guardSlack = time.Second

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
	w     io.WriteCloser
	cmd   *exec.Cmd
	lapse time.Time // when the guard kills the groups listed; zero: not set
}

// guardLease tells the guard that the leases of this process's runs lapse
// at until, when one runs: at each renewal (renewed), and at a run's start
// when the guard has no lapse to come, so that a worker stopped before
// its first renewal is covered too. A renewal arms the guard's sleeper
// anew; a start arms it only when it is not, as once per guard. The zero
// until disarms it: the worker has stopped, its runs are over.
func guardLease(until time.Time, renewed bool) {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	g := guard.p
	switch {
	case g == nil || !renewed && g.lapse.After(time.Now()):
	case until.IsZero():
		if _, err := fmt.Fprintf(g.w, "X\n"); err == nil {
			g.lapse = time.Time{}
		}
	case g.lease(time.Until(until)+guardSlack) == nil:
		g.lapse = until
	}
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

// lease tells the guard to kill the groups listed d from now, unless told
// again before.
func (g *guardProc) lease(d time.Duration) error {
	_, err := fmt.Fprintf(g.w, "L %.3f\n", max(d, 0).Seconds())
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

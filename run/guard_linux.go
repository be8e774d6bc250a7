package run

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
// SIGSTOP) leaves its runs running, each in a process group of its own,
// while their leases lapse unrenewed, and a worker of another host takes
// them for lost and runs the jobs again, beside them. Its fence
// (lease.go), which stops each run at the end of its lease, cannot act
// while it is stopped; the guard does. Each group comes with the end of
// its run's lease ("+ PGID LAPSE"), and each renewal says the new end of
// each group it renewed ("= PGID LAPSE"), as /proc/uptime counts, in
// hundredths of a second, guardSlack after the lease. A ticker, a child
// the guard starts once, wakes it every second (USR1); it then kills each
// group whose lapse has passed, if the worker is stopped (its state in
// /proc/WORKER/stat). While the worker runs it kills nothing: the worker
// stops its runs itself, and judges one whose store it could not reach
// lost, not failed.
//
// It is a shell, not this program again: it costs a process per worker
// (not per run), needs nothing of this program's, and a shell ignoring
// the terminal's signals is all it must be. It forks once, the ticker,
// when it starts: a fork that fails later (a pids limit) would end a
// shell, and the guard with it. The ticker forks a sleep a second; should
// one fail, the ticker ends, not the guard, which then still kills its
// groups when the worker goes. The ticker ends when the guard does (it
// checks that the guard is still its parent). A read that a signal cuts
// short fails in some shells (dash) and is restarted in others (bash):
// fired tells the one from the end of the pipe; a line is never cut
// short, as each write of lines is whole and at most PIPE_BUF. Lines and
// wake-ups change the list one at a time (busy, pending).
const guardScript = `trap '' INT HUP QUIT TERM PIPE USR2
worker=$1 guard=$$ groups= busy= pending= fired=
( trap '' USR1
  while sleep 1; do
	read -r st < /proc/self/stat; st=${st##*) }; set -- $st
	[ "$2" = "$guard" ] || exit 0
	kill -s USR1 -- "-$guard" 2>/dev/null || exit 0
  done ) &
ticker=$!
check() {
	while :; do
		busy=1 pending=
		read -r up _ < /proc/uptime; up=$((${up%.*} * 100 + 1${up#*.} - 100))
		st=; read -r st < "/proc/$worker/stat"; st=${st##*) }; state=${st%% *}
		case $state in T|t) ;; *) busy=; [ -n "$pending" ] || return 0; continue ;; esac
		left=
		for x in $groups; do
			if [ "${x#*:}" -le "$up" ]; then kill -s KILL -- "-${x%:*}" 2>/dev/null; else left="$left $x"; fi
		done
		groups=$left busy=
		[ -n "$pending" ] || return 0
	done
}
woke() { fired=1 pending=1; [ -n "$busy" ] || check; }
trap woke USR1
while :; do
	if ! read -r op g d; then
		[ -n "$fired" ] && { fired=; continue; }
		break
	fi
	fired= busy=1
	case $op in
	+) groups="$groups $g:$d" ;;
	-) left=; for x in $groups; do [ "${x%:*}" = "$g" ] || left="$left $x"; done; groups=$left ;;
	=) left=; for x in $groups; do if [ "${x%:*}" = "$g" ]; then left="$left $g:$d"; else left="$left $x"; fi; done; groups=$left ;;
	esac
	busy=
	[ -n "$pending" ] && check
done
kill -s KILL "$ticker" 2>/dev/null
for x in $groups; do kill -s KILL -- "-${x%:*}" 2>/dev/null; done`

// guardSlack is how long after a run's lease the guard kills it, should
// its worker be stopped: after the fence would have; with the ticker's
// second, well before another host may recover the run (OtherHostGrace).
const guardSlack = 500 * time.Millisecond

// guardShell runs the guard (a test makes it one that cannot start).
var guardShell = "/bin/sh"

// guard is this process's guard: started with the first run, and again
// after a write to it failed (it was killed), told then of every live run.
var guard struct {
	mu sync.Mutex
	p  *guardProc // nil: none running
}

// guardGroup tells the guard that run group pgid started (add), its
// run's lease ending at lapse, or ended. Callers hold liveRuns.mu, so the
// guard's list follows liveRuns in order. It reports whether a guard holds
// the group now (add) or let it go.
func guardGroup(pgid int, add bool, lapse time.Time, live func() map[int]time.Time) bool {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if guard.p != nil {
		if guard.p.tell(pgid, add, lapse) == nil {
			return true
		}
		guard.p.abandon()
		guard.p = nil
	}
	if !add {
		return true // a new guard is told only of live runs
	}
	p, err := startGuard(os.Getpid())
	if err != nil {
		return false // no guard: the run's start is recorded before it runs, for the next worker of this host
	}
	guard.p = p
	held := true
	for g, l := range live() { // pgid among them
		if p.tell(g, true, l) != nil {
			held = false
		}
	}
	return held
}

// guardRenewed tells the guard the new lapse of each group a renewal
// renewed. Callers hold liveRuns.mu (live lists the live runs' groups). A
// guard that takes no line is replaced by one told of every live group.
func guardRenewed(lapses map[int]time.Time, live func() map[int]time.Time) {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if guard.p == nil || len(lapses) == 0 {
		return
	}
	// Whole lines, at most PIPE_BUF a write: the pipe keeps each write
	// whole, so no line reaches the guard in parts.
	var b []byte
	var err error
	for g, l := range lapses {
		line := fmt.Appendf(nil, "= %d %d\n", g, uptimeAt(l))
		if len(b)+len(line) > 4096 {
			if _, err = guard.p.w.Write(b); err != nil {
				break
			}
			b = b[:0]
		}
		b = append(b, line...)
	}
	if err == nil {
		_, err = guard.p.w.Write(b)
	}
	if err == nil {
		return
	}
	guard.p.abandon()
	guard.p = nil
	if p, err := startGuard(os.Getpid()); err == nil {
		guard.p = p
		for g, l := range live() {
			p.tell(g, true, l)
		}
	}
}

// uptimeAt is when the guard kills a group whose run's lease ends at
// lapse, should its worker be stopped then: guardSlack after it, as
// /proc/uptime counts (CLOCK_BOOTTIME), in hundredths of a second.
func uptimeAt(lapse time.Time) int64 {
	if lapse.IsZero() {
		return 1 << 60 // no lease known: never
	}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	now := time.Duration(ts.Nano())
	return int64((now+time.Until(lapse)+guardSlack)/(10*time.Millisecond)) + 1
}

// guardProc is a running guard and the pipe to it.
type guardProc struct {
	w   io.WriteCloser
	cmd *exec.Cmd
}

// startGuard starts a guard of the runs of process worker (this one's; a
// test's stand-in): stdin a pipe from this process, stdout and stderr
// nowhere, in a process group of its own (a Ctrl-C at the worker's
// terminal is not for it), with no QUEUECTL_RUN mark (no run's cleanup
// stops it).
func startGuard(worker int) (*guardProc, error) {
	cmd := exec.Command(guardShell, "-c", guardScript, "guard", strconv.Itoa(worker))
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

// tell writes one line of the guard's list: "+ PGID LAPSE" or "- PGID".
func (g *guardProc) tell(pgid int, add bool, lapse time.Time) error {
	var err error
	if add {
		_, err = fmt.Fprintf(g.w, "+ %d %d\n", pgid, uptimeAt(lapse))
	} else {
		_, err = fmt.Fprintf(g.w, "- %d\n", pgid)
	}
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
	syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL) // its ticker too
	g.cmd.Process.Kill()
	g.w.Close()
	waitChild(g.cmd)
}

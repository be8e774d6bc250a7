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
// its run's lease ("+ PGID LAPSE"), each renewal says the new end of each
// group it renewed ("= PGID LAPSE", then "A"), as /proc/uptime counts, in
// hundredths of a second, a second after the lease. A sleeping child of
// the guard wakes it (USR1) at the first lapse to come; it then kills each
// group whose lapse has passed if the worker is stopped (its state in
// /proc/WORKER/stat), and looks again a second later if the worker runs,
// which stops its runs itself (and judges one whose store it could not
// reach lost, not failed). A renewal costs a sleeping child (a subshell
// and its sleep); a run, a line, and a sleeping child only when it ends
// before every other group's. A wake-up from a sleeper since replaced
// does no harm: each group is judged by its own lapse.
//
// It is a shell, not this program again: it costs a process per worker
// (not per run), needs nothing of this program's, and a shell ignoring
// the terminal's signals is all it must be. A read that a signal cut short
// fails in some shells (dash) and is restarted in others (bash): fired
// tells the one from the end of the pipe. Lines and wake-ups change the
// list one at a time (busy, pending): a wake-up that comes while a line
// is handled is handled after it. The sleeper signals the guard's process
// group, not its pid: the group lives while the sleeper does, so its
// number cannot be another process's by then. It ignores USR2, by which
// the guard ends it, until it knows its sleep's pid, which it then kills
// with it.
const guardScript = `trap '' INT HUP QUIT TERM PIPE
worker=$1 groups= sleeper= armed= busy= pending= fired=
check() {
	while :; do
		busy=1 pending=
		read -r up _ < /proc/uptime; up=${up%.*}${up#*.}
		state=; read -r _ _ state _ < "/proc/$worker/stat"
		left= next=
		for x in $groups; do
			g=${x%:*} d=${x#*:}
			if [ "$d" -le "$up" ]; then
				case $state in T|t) kill -s KILL -- "-$g" 2>/dev/null; continue ;; esac
				d=$((up + 100))
			fi
			left="$left $x"
			{ [ -z "$next" ] || [ "$d" -lt "$next" ]; } && next=$d
		done
		groups=$left
		[ -n "$sleeper" ] && kill -s USR2 "$sleeper" 2>/dev/null
		sleeper= armed=$next
		if [ -n "$next" ]; then
			t=$((next - up)); c=$((t % 100)); [ "$c" -lt 10 ] && c=0$c
			( trap '' USR1 USR2; sleep "$((t / 100)).$c" & s=$!
			  trap '[ -n "$s" ] && kill -s KILL "$s" 2>/dev/null; exit' USR2
			  wait "$s"; s=; trap '' USR2; kill -s USR1 -- "-$$" ) &
			sleeper=$!
		fi
		busy=
		[ -n "$pending" ] || break
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
	+) groups="$groups $g:$d"; { [ -z "$armed" ] || [ "$d" -lt "$armed" ]; } && pending=1 ;;
	-) left=; for x in $groups; do [ "${x%:*}" = "$g" ] || left="$left $x"; done; groups=$left ;;
	=) left=; for x in $groups; do if [ "${x%:*}" = "$g" ]; then left="$left $g:$d"; else left="$left $x"; fi; done; groups=$left ;;
	A) pending=1 ;;
	esac
	busy=
	[ -n "$pending" ] && check
done
[ -n "$sleeper" ] && kill -s USR2 "$sleeper" 2>/dev/null
for x in $groups; do kill -s KILL -- "-${x%:*}" 2>/dev/null; done`

// guardSlack is how long after a run's lease the guard kills it, should
// its worker be stopped: after the fence would have, well before another
// host may recover the run (OtherHostGrace).
const guardSlack = time.Second

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
// renewed, then to look again. Callers hold liveRuns.mu.
func guardRenewed(lapses map[int]time.Time) {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if guard.p == nil {
		return
	}
	var b strings.Builder
	for g, l := range lapses {
		fmt.Fprintf(&b, "= %d %d\n", g, uptimeAt(l))
	}
	b.WriteString("A\n")
	guard.p.w.Write([]byte(b.String())) // a guard that takes no line is replaced at the next run's start
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
	g.cmd.Process.Kill()
	g.w.Close()
	waitChild(g.cmd)
}

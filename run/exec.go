package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/queuectl/queuectl/claim"
	"golang.org/x/sys/unix"
)

// result is how one run ended. A non-zero exit is a result, not an error.
type result struct {
	exitCode    *int
	err         string // empty when the job exited 0
	interrupted bool   // stopped by a hard stop: the job goes back to pending
	canceled    bool   // stopped because its job was canceled
	confinedBy  string // what held the run ("cgroup", "rlimit", "cgroup+rlimit"), or ""
	// lost: the run was killed after its lease expired. A reaper recovers
	// it as a lost run, not a failed attempt, so the slot records nothing.
	lost bool
	// fault: the run could not start for a cause outside the job (its log
	// directory, a full disk, no memory). The job did not run; it waits
	// and is tried again, without counting the attempt.
	fault string
	// final: the job cannot run on this host as it is (a limit above the
	// host's maximum); it is dead at once, its other attempts not spent
	// in vain.
	final bool
	// outputLost says the run's log could not be written whole (a full
	// disk); it is kept as the run's error, whatever the run's end.
	outputLost string
	took       time.Duration
	// over and endedAt: when the run's processes were gone, on this
	// host's clock and on the store's; zero when none started.
	over, endedAt time.Time
	// pgid and execAt: the run's process group, and when its command
	// started; zero when it did not.
	pgid   int
	execAt time.Time
	// tails: the end of each stream, kept with the run when it ends; nil
	// when the job did not start.
	tails *claim.Tails
}

// execute runs one claimed job to its end. The job runs as /bin/sh -c in a
// process group of its own, so that a timeout, a hard stop or a reaper can
// kill everything it started; its stdout and stderr stream through pipes to
// log files made on their first byte (see output). run cancels the run: a
// hard stop, or its job's cancel (cause errCanceled).
func (w *Worker) execute(run context.Context, j claim.Job, r claim.Run, slot *slotCgroup) result {
	// Its log directory was checked before it was said to start (runOne).
	stdout, err := newOutput(r.StdoutPath)
	if err != nil {
		return result{fault: err.Error()}
	}
	stderr, err := newOutput(r.StderrPath)
	if err != nil {
		stdout.finish()
		return result{fault: err.Error()}
	}
	if w.Output != nil {
		stdout.tee = func(off int64, p []byte) { w.Output(j.ID, r.Attempt, 0, off, p) }
		stderr.tee = func(off int64, p []byte) { w.Output(j.ID, r.Attempt, 1, off, p) }
	}
	res := w.start(run, j, r, stdout.w, stderr.w, slot)
	// The run is over once its output is in the files: whoever reads the
	// logs after the job ended reads all of it. Output lost to a disk that
	// filled while the job ran does not change the job's own result: it
	// ran, and running it again could repeat what it did.
	if err := errors.Join(stdout.finish(), stderr.finish()); err != nil && !res.interrupted && !res.canceled {
		res.outputLost = "output lost: " + strings.ReplaceAll(err.Error(), "\n", "; ")
		w.emit(Event{Kind: EventWarning, Job: j.ID, Run: r.Attempt, Err: fmt.Sprintf("job %s: run %d: %s", j.ID, r.Attempt, res.outputLost)})
	}
	if res.fault == "" {
		res.tails = tails(stdout, stderr)
	}
	return res
}

// prepareLogDir checks, without creating the job's own directory (a job
// that prints nothing leaves none), that its logs can be written: logs/ and
// the job's directory, where it exists, are real writable directories, on
// a file system with room.
func prepareLogDir(dir string) error {
	parent := filepath.Dir(dir)
	if _, err := os.Lstat(dir); err != nil {
		return checkLogs(parent)
	}
	if err := realDir(parent); err != nil {
		return err
	}
	if err := realDir(dir); err != nil {
		return err
	}
	return writable(dir)
}

// checkLogs checks that logs/ is, or can be made, a real writable
// directory on a file system with room.
func checkLogs(logs string) error {
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return fmt.Errorf("create log directory: %w", err)
	}
	if err := realDir(logs); err != nil {
		return err
	}
	return writable(logs)
}

// writable checks that the directory check may be written, with room.
func writable(check string) error {
	if err := unix.Access(check, unix.W_OK); err != nil {
		return fmt.Errorf("log directory %s is not writable: %w", check, err)
	}
	var st syscall.Statfs_t
	if syscall.Statfs(check, &st) == nil && st.Bavail == 0 {
		return fmt.Errorf("disk full: %s (no space left for the job's logs)", check)
	}
	// A run makes up to three files: its directory, .out and .err. A file
	// system that does not count inodes (btrfs) says 0 of 0.
	if st.Files > 0 && st.Ffree < 3 {
		return fmt.Errorf("disk full: %s (no inodes left for the job's logs: remove files on that file system)", check)
	}
	return nil
}

// inCwd is err, from a start that failed, or what is wrong with the job's
// working directory cwd when that is why: the child's chdir and its exec
// fail alike ("fork/exec /bin/sh: no such file or directory").
func inCwd(err error, cwd string) error {
	if cwd == "" {
		return err
	}
	fi, serr := os.Stat(cwd)
	switch {
	case serr != nil:
		return fmt.Errorf("working directory: %w", serr)
	case !fi.IsDir():
		return fmt.Errorf("working directory %s is not a directory", cwd)
	case unix.Access(cwd, unix.X_OK) != nil:
		return fmt.Errorf("working directory %s: permission denied", cwd)
	}
	return err
}

// envFault reports whether err from starting a process is the machine's
// fault (no memory, no processes, no file descriptors) rather than the
// job's (a cwd that does not exist, say).
func envFault(err error) bool {
	for _, e := range []error{syscall.EAGAIN, syscall.ENOMEM, syscall.EMFILE, syscall.ENFILE, syscall.ENOSPC} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// start runs the job with the job's ends of its output pipes, and closes
// the worker's copies once the job has them, so that EOF on a pipe means
// the job's processes are done with it. A run without a memory limit is
// born in the slot's cgroup, where there is one.
func (w *Worker) start(run context.Context, j claim.Job, r claim.Run, stdout, stderr *os.File, slot *slotCgroup) result {
	ctx, cancel := context.WithCancel(run)
	defer cancel()
	var timedOut, gone atomic.Bool // gone: the run's processes, its shell's and those it left
	if j.Timeout > 0 {
		ended := make(chan struct{})
		defer close(ended)
		t := time.AfterFunc(j.Timeout, func() {
			timedOut.Store(true)
			grace := w.settings().StopTimeout
			cancel()
			if grace <= time.Second {
				return
			}
			// A job that traps TERM (its shell, or a process it started)
			// runs on until the stop-timeout's KILL: say so, rather than
			// nothing until then.
			select {
			case <-ended:
			case <-time.After(time.Second):
				if !gone.Load() {
					w.emit(Event{Kind: EventWarning, Job: j.ID, Run: r.Attempt, Err: fmt.Sprintf(
						"job %s timed out after %v and goes on after SIGTERM; killed %v after it", j.ID, j.Timeout, grace)})
				}
			}
		})
		defer t.Stop()
	}
	// The job waits behind a gate until its process group is confined and
	// known to the guard. If this worker dies before that, the gate reads
	// EOF and none of the job runs.
	gate, open, err := gatePipe()
	if err != nil {
		return result{err: fmt.Sprintf("start: %v", err)}
	}
	defer open.Close()
	mark := runMark(w.id, j.ID, r.Attempt)
	var stopped stopTime
	newCmd := func() *exec.Cmd {
		cmd := w.command(ctx, run, j, r, mark, &stopped)
		cmd.ExtraFiles = []*os.File{gate} // fd 3
		cmd.Stdin, cmd.Stdout, cmd.Stderr = jobStdin(), stdout, stderr
		return cmd
	}
	cmd := newCmd()
	limits := j.Limits.Or(w.settings().Limits) // read once: a reload may come meanwhile
	var born *slotCgroup                       // the slot's cgroup, when the run is born in it
	if limits.Memory == 0 {
		born = slot.bornIn(cmd)
	}

	// Pdeathsig fires when the thread that forked the child exits, not the
	// process: keep this goroutine on one thread until the child is reaped.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = startChild(cmd)
	if err != nil && born != nil {
		// The kernel or its cgroup may refuse the clone into it: where one
		// without works, the worker's runs go without (not for a lack of
		// memory or processes, which the second try may just have missed).
		plain := newCmd()
		if err2 := startChild(plain); err2 == nil {
			if !envFault(err) {
				born.refused(err)
			}
			cmd, born, err = plain, nil, nil
		} else {
			err = err2
		}
	}
	gate.Close()
	stdout.Close()
	stderr.Close()
	if err != nil {
		return notStarted(run, inCwd(err, j.Cwd))
	}
	conf, err := w.limit(cmd, limits, j, &r, born)
	if err != nil {
		open.Close() // the gate reads EOF: the shell exits without running the command
		waitChild(cmd)
		conf.end()
		var over *overLimit
		return result{err: fmt.Sprintf("set limits: %v", err), final: errors.As(err, &over)}
	}
	// Known to the steering (its group) before the guard is told of it,
	// with its lease read then: a renewal meanwhile is not missed.
	id := claim.RunID{JobID: r.JobID, Attempt: r.Attempt}
	r.PGID, r.ExecAt = cmd.Process.Pid, w.Store.Now()
	w.steer.started(id, r.PGID)
	guarded := runStarted(cmd.Process.Pid, mark, conf, func() time.Time { return w.steer.lapseOf(id) })
	record := w.recordStart(run, r, guarded)
	open.Write([]byte("go\n")) // EPIPE when the job was stopped meanwhile: nothing to open
	open.Close()
	err = waitChild(cmd)
	oomKilled := endLeftovers(cmd.Process.Pid, mark, conf, &stopped)
	gone.Store(true)
	// The run is over for the fence from here: a lease that lapses while
	// the record below waits for a store that hangs stops nothing, and a
	// run that ended inside its lease is recorded as it ended, not as one
	// the fence killed (and run again).
	w.steer.ended(id)
	over := time.Now()
	r.EndedAt = w.Store.Now()
	// After the processes are gone, not before: a record of the start
	// that is being written then may take a while, and is no process.
	record.stop()
	res := w.judge(run, j, r, cmd, conf, exited{err: err, timedOut: timedOut.Load(), oomKilled: oomKilled})
	res.pgid, res.execAt, res.over, res.endedAt = r.PGID, r.ExecAt, over, r.EndedAt
	return res
}

// startRecordDelay is how long a guarded run goes on before its start
// (process group, when its command started, what holds it) is recorded on
// its own. A run that ends sooner, as most do, has its start recorded with
// its end, in the same write: one write a run fewer. Meanwhile, should this
// worker die, its guard kills the run's group (guard_linux.go), and the
// reaper of the next worker of this host finds the run's processes by
// their QUEUECTL_RUN mark. A run no guard holds (none could start, or
// another system than Linux) has its start recorded before it runs: the
// reaper kills the groups it finds recorded.
var startRecordDelay = time.Second // a variable for tests

// startRecord is a run's start, to be recorded on its own should the run
// go on for startRecordDelay.
type startRecord struct {
	timer *time.Timer
	done  chan struct{} // closed once a record that began has ended
}

// recordStart records r's start: once it has run for startRecordDelay,
// unless stop comes first, when a guard holds it (guarded); else now.
func (w *Worker) recordStart(run context.Context, r claim.Run, guarded bool) *startRecord {
	rec := &startRecord{done: make(chan struct{})}
	record := func() {
		defer close(rec.done)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(run), 30*time.Second)
		defer cancel()
		if err := w.Store.Started(ctx, r, r.PGID); err != nil && !w.storeDown(err) && !w.diskFull(err) {
			w.logf("job %s: %v", r.JobID, err)
		}
	}
	if !guarded {
		record()
		return rec
	}
	rec.timer = time.AfterFunc(startRecordDelay, record)
	return rec
}

// stop cancels the record, or waits for it to end if it began: no write
// of the run's outlives its slot.
func (rec *startRecord) stop() {
	if rec.timer == nil || !rec.timer.Stop() {
		<-rec.done
	}
}

// stopTime is until when a stopped run (its group sent TERM, or KILL when
// fenced) may take to end: what is left of its processes
// once the job's shell has exited keeps that grace (endLeftovers).
type stopTime struct {
	mu       sync.Mutex
	deadline time.Time // zero: not stopped
}

// set keeps the first stop's deadline, grace from now.
func (s *stopTime) set(grace time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deadline.IsZero() {
		s.deadline = time.Now().Add(grace)
	}
}

// get returns whether the run was stopped, and its deadline.
func (s *stopTime) get() (bool, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.deadline.IsZero(), s.deadline
}

// command is the job's shell, behind the gate (fd 3, the caller's), with
// its directory and environment. Canceling ctx stops its process group:
// at once when run was fenced, with the stop-timeout's grace otherwise;
// stopped keeps when, for what the shell leaves.
func (w *Worker) command(ctx, run context.Context, j claim.Job, r claim.Run, mark string, stopped *stopTime) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/bin/sh", gatedArgs(j.Command, j.Umask)...)
	cmd.Dir = j.Cwd
	cmd.Env = append(mergeEnv(os.Environ(), j.Env, r), "QUEUECTL_RUN="+mark)
	if w.Home != "" {
		cmd.Env = append(cmd.Env, "QUEUECTL_HOME="+w.Home)
	}
	if _, own := j.Env["QUEUECTL_DB"]; w.DB != "" && !own {
		cmd.Env = append(cmd.Env, "QUEUECTL_DB="+w.DB)
	}
	cmd.SysProcAttr = childAttr()
	cmd.Cancel = func() error {
		if fencedBy(run) != nil {
			// Another host may start the job again (4 s after the lease,
			// or now): no grace for this run.
			stopped.set(0)
			return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		grace := w.settings().StopTimeout
		stopped.set(grace)
		return w.killGroup(cmd.Process.Pid, grace)
	}
	return cmd
}

// limit confines the started job to limits (its own, or the worker's), and
// records in r what holds it: a run without limits is held by the slot's
// cgroup it was born in (born), or by nothing (nil, no error).
func (w *Worker) limit(cmd *exec.Cmd, limits claim.Limits, j claim.Job, r *claim.Run, born *slotCgroup) (*confinement, error) {
	if limits.IsZero() {
		conf := inSlot(born)
		if conf != nil {
			r.Confined = conf.via
		}
		return conf, nil
	}
	runName := fmt.Sprintf("%d-%s-%d", os.Getpid(), j.ID, r.Attempt)
	conf, err := confine(cmd.Process.Pid, limits, runName, born)
	if err != nil {
		return conf, err
	}
	r.Confined = conf.via
	return conf, nil
}

// endLeftovers ends, once the job's shell (pid) has exited, whatever the
// job left behind: its group, and what left the group but came back to
// this worker (the child subreaper). A run that was stopped keeps its
// stop's grace: its group has had its TERM (a shell that died of it
// leaves a command that traps it, cleaning up) and is killed at the
// stop's deadline, as the shell would have been. It reports whether the
// confinement killed the job for its memory.
func endLeftovers(pid int, mark string, conf *confinement, stopped *stopTime) (oomKilled bool) {
	if was, deadline := stopped.get(); was {
		// What left the group had no TERM yet: it gets leftoverGrace at
		// least, as before, however little of the stop's grace is left.
		stopUntil(leftovers(pid, mark, false, false), pid, later(deadline, time.Now().Add(leftoverGrace)))
	} else {
		stop(leftovers(pid, mark, false, false), leftoverGrace)
	}
	oomKilled = conf.end()
	runEnded(pid)
	stop(orphans(), leftoverGrace)
	return oomKilled
}

// leaseExpired reports whether a run's lease has lapsed, so that a reaper
// (this worker's or another's) killed it to recover it.
func (w *Worker) leaseExpired(hard context.Context, id string, attempt int) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(hard), 5*time.Second)
	defer cancel()
	j, err := w.Store.Get(ctx, id)
	if err != nil {
		return false
	}
	if j.State == claim.Processing && j.Runs == attempt {
		return !w.Store.Now().Before(j.LeaseUntil)
	}
	// Moved on: recovered already (the run ended lost), or canceled.
	runs, err := w.Store.Runs(ctx, id)
	if err != nil {
		return false
	}
	for _, r := range runs {
		if r.Attempt == attempt {
			return r.Outcome == claim.OutcomeLost
		}
	}
	return false
}

// devNull is every job's stdin, opened once and shared: os/exec would open
// /dev/null for each job, and poll it, and close it. Jobs share its open
// file description, so status flags a job sets on its stdin (O_NONBLOCK)
// or a flock on it reach the others; on /dev/null, which reads nothing,
// neither changes what a job sees.
var devNull = sync.OnceValue(func() *os.File {
	f, _ := os.Open(os.DevNull)
	return f
})

// jobStdin is /dev/null, or nil when it could not be opened: os/exec then
// opens it itself, and says why it cannot.
func jobStdin() io.Reader {
	if f := devNull(); f != nil {
		return f
	}
	return nil
}

// leftoverGrace is how long what a run left behind has between TERM and
// KILL once the run has ended.
const leftoverGrace = time.Second

// gate is the first command of the job's shell: it waits until the worker
// writes "go" to fd 3. EOF, when the worker died first, ends the shell (125)
// before anything of the job's command runs. Its variable is in queuectl's
// own namespace, so that it unsets none of the job's environment.
const gate = `read -r QUEUECTL_GATE <&3 && [ "$QUEUECTL_GATE" = go ] || exit 125; exec 3<&-; unset QUEUECTL_GATE; `

// gatedArgs are the arguments of /bin/sh that run command behind the gate,
// in the same shell (no second exec). The command follows the gate on the
// gate's line, so the shell runs it as /bin/sh -c would: $0 is /bin/sh,
// there are no positional parameters, lines count from the command's first,
// and diagnostics name nothing of the gate (through eval, dash said
// "eval: nosuch: not found"). The shell parses that line whole before it
// runs any of it: a syntax error in the command's first line ends the
// shell at once (exit 2, as under sh -c), the gate unread and nothing run.
// A command too long to share one argument with the gate (MAX_ARG_STRLEN)
// comes as $1 to eval instead: it runs the same, but dash's diagnostics of
// it begin "eval: ".
//
// A job that carries a umask (run's caller's) has it set by its own shell,
// once the gate is open, on the same line: the worker's umask, which every
// slot shares, is never changed, and the command's lines count as before.
func gatedArgs(command string, umask *int) []string {
	prefix := gate
	if umask != nil {
		prefix += fmt.Sprintf("umask %04o; ", *umask&0o777)
	}
	if len(prefix)+len(command) <= claim.MaxArgLen {
		return []string{"-c", prefix + command}
	}
	return []string{"-c", prefix + `eval "shift; $1"`, "/bin/sh", command}
}

// killGroup stops a job's process group: TERM, then KILL after grace
// (stop-timeout). A process stopped by a signal (kill -STOP, SIGTSTP) acts
// on its TERM only once continued, so CONT follows the TERM, as systemd
// sends it: a stopped job's trap cleans up, instead of waiting for the
// KILL. It returns at once; the KILL is sent from a timer.
func (w *Worker) killGroup(pgid int, grace time.Duration) error {
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
		return err
	}
	syscall.Kill(-pgid, syscall.SIGCONT)
	time.AfterFunc(grace, func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	return nil
}

// UnsetEnv is the job env variable that names, separated by spaces, the
// variables of the worker's environment the job must not get: what `run`'s
// caller did not have (make's unexport, env -u). It is not passed on. A
// name with white space in it cannot be listed: a job that carries
// UnsetEnv, even empty, gets no such variable of the worker's.
const UnsetEnv = "QUEUECTL_UNSET"

// Listable reports whether UnsetEnv can name the variable name: it has no
// white space (strings.Fields splits the list on it).
func Listable(name string) bool { return !strings.ContainsFunc(name, unicode.IsSpace) }

// mergeEnv lays the job's env over the worker's, less what UnsetEnv names,
// and tells the job who it is.
func mergeEnv(base []string, env map[string]string, r claim.Run) []string {
	list, measured := env[UnsetEnv]
	unset := strings.Fields(list)
	out := make([]string, 0, len(base)+len(env)+2)
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, over := env[name]; !over && name != "QUEUECTL_JOB_ID" && name != "QUEUECTL_ATTEMPT" && name != "QUEUECTL_RUN" &&
			!slices.Contains(unset, name) && (!measured || Listable(name)) {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		if k != "QUEUECTL_RUN" && k != UnsetEnv {
			out = append(out, k+"="+v)
		}
	}
	return append(out, "QUEUECTL_JOB_ID="+r.JobID, fmt.Sprintf("QUEUECTL_ATTEMPT=%d", r.Attempt))
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

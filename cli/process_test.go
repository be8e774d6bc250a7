package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// qhome drives the real queuectl binary against one fresh home.
type qhome struct {
	t   *testing.T
	dir string
	db  string // a PostgreSQL store's URL; "": the home's queue.db
}

func newHome(t *testing.T) *qhome {
	t.Helper()
	return &qhome{t: t, dir: filepath.Join(t.TempDir(), "home")}
}

// newPostgresHome is a fresh home whose store is a fresh PostgreSQL schema
// (QUEUECTL_TEST_POSTGRES; skipped without it).
func newPostgresHome(t *testing.T) *qhome {
	t.Helper()
	h := newHome(t)
	// Four connections a process: a test runs dozens of processes, and the
	// server has room for 100 at most, shared with the other tests.
	h.db = pgtest.DSN(t) + "&pool_max_conns=4"
	return h
}

// location is the store as claim.Open takes it.
func (h *qhome) location() string {
	if h.db != "" {
		return h.db
	}
	return filepath.Join(h.dir, "queue.db")
}

func (h *qhome) command(args ...string) *exec.Cmd { return h.commandOf("queuectl", args...) }

// commandOf is command for prog: queuectl (the front program) or
// queuectl-full.
func (h *qhome) commandOf(prog string, args ...string) *exec.Cmd {
	bin, err := exec.LookPath(prog)
	if err != nil {
		h.t.Fatalf("%s not on PATH: %v", prog, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "QUEUECTL_HOME="+h.dir, "NO_COLOR=1")
	if h.db != "" {
		cmd.Env = append(cmd.Env, "QUEUECTL_DB="+h.db)
	}
	return cmd
}

// runLimit bounds every queuectl run that a test waits for.
const runLimit = 2 * time.Minute

// run runs queuectl to its end and returns its output and exit code.
func (h *qhome) run(args ...string) (stdout, stderr string, code int) {
	h.t.Helper()
	cmd := h.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// A command that hangs fails the test instead of hanging it.
	limit := time.AfterFunc(runLimit, func() { cmd.Process.Kill() })
	err := cmd.Run()
	if !limit.Stop() {
		h.t.Fatalf("queuectl %s: still running after %v; killed\nstderr: %s", strings.Join(args, " "), runLimit, errb.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		h.t.Fatalf("queuectl %v: %v", args, err)
	}
	return out.String(), errb.String(), shellCode(err)
}

// must runs queuectl and fails the test unless it exits 0.
func (h *qhome) must(args ...string) string {
	h.t.Helper()
	out, errText, code := h.run(args...)
	if code != 0 {
		h.t.Fatalf("queuectl %s: exit %d\nstderr: %s", strings.Join(args, " "), code, errText)
	}
	return out
}

// proc is a queuectl process running in the background.
type proc struct {
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

func (h *qhome) start(args ...string) *proc {
	h.t.Helper()
	return h.startCmd(h.command(args...))
}

// startCmd starts cmd, made by command or commandOf; a stdout it set is
// kept.
func (h *qhome) startCmd(cmd *exec.Cmd) *proc {
	h.t.Helper()
	p := &proc{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	if p.cmd.Stdout == nil {
		p.cmd.Stdout = p.stdout
	}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		h.t.Fatalf("start %v: %v", cmd.Args, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	h.t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// startRegistered starts cmd, the home's only worker, and waits until
// status counts it.
func (h *qhome) startRegistered(cmd *exec.Cmd) *proc {
	h.t.Helper()
	w := h.startCmd(cmd)
	waitFor(h.t, 30*time.Second, "the worker to register", func() bool {
		out, _, _ := h.run("status")
		return strings.Contains(out, "workers: 1")
	})
	return w
}

// startServing starts a worker (with flags, e.g. --queue other) and waits
// for its enqueue socket, so that enqueue and run go through the hand-off
// (to it: a worker started after it finds the socket served).
func (h *qhome) startServing(flags ...string) *proc {
	h.t.Helper()
	w := h.start(append([]string{"worker", "start", "--no-spool"}, flags...)...)
	waitFor(h.t, 30*time.Second, "the worker's socket", func() bool {
		_, err := os.Stat(filepath.Join(h.dir, "enqueue.sock"))
		return err == nil
	})
	return w
}

// killMidJob starts a worker (with flags), waits for the file marker its
// job creates once it runs, and kills the worker with SIGKILL: a crash
// with a run in hand. It returns the dead worker, to name it.
func (h *qhome) killMidJob(marker string, flags ...string) *proc {
	h.t.Helper()
	w := h.start(append([]string{"worker", "start"}, flags...)...)
	waitFor(h.t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	w.signal(h.t, syscall.SIGKILL)
	w.exit(h.t, 30*time.Second)
	return w
}

// exit waits for the process to end and returns its exit code.
func (p *proc) exit(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("queuectl %v still running after %v\nstderr: %s", p.cmd.Args[1:], timeout, p.stderr)
	}
	return shellCode(p.err)
}

// shellCode is the exit code a shell reports for a process that ended
// with err (cmd.Wait's): 128 + the signal for one a signal ended.
func shellCode(err error) int {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// ended reports whether p has exited, without waiting.
func ended(p *proc) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// jobView is the part of `show --json` the tests read.
type jobView struct {
	ID        string `json:"id"`
	State     string `json:"state"`
	Attempts  int    `json:"attempts"`
	LastError string `json:"last_error"`
	ExitCode  *int   `json:"exit_code"`
	Runs      []struct {
		Attempt   int       `json:"attempt"`
		Outcome   string    `json:"outcome"`
		ExitCode  *int      `json:"exit_code"`
		StartedAt time.Time `json:"started_at"`
		EndedAt   time.Time `json:"ended_at"`
	} `json:"runs"`
}

func (h *qhome) show(id string) jobView {
	h.t.Helper()
	var v jobView
	if err := json.Unmarshal([]byte(h.must("show", "--json", id)), &v); err != nil {
		h.t.Fatalf("show --json %s: %v", id, err)
	}
	return v
}

func (h *qhome) count(state string) int {
	h.t.Helper()
	var jobs []json.RawMessage
	if err := json.Unmarshal([]byte(h.must("list", "--json", "--state", state)), &jobs); err != nil {
		h.t.Fatalf("list --json: %v", err)
	}
	return len(jobs)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	waitReport(t, timeout, what, cond, nil)
}

// waitReport is waitFor that, on a timeout, also says what report returns:
// how far the wait got, what the processes waited on said.
func waitReport(t *testing.T, timeout time.Duration, what string, cond func() bool, report func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			if report != nil {
				t.Fatalf("timed out after %v waiting for %s: %s", timeout, what, report())
			}
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lines reads a file of lines and counts each distinct line.
func lines(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l != "" {
			seen[l]++
		}
	}
	return seen
}

func TestRetryBackoffThenDead(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "flaky", "--max-retries", "2", "--backoff-base", "1",
		"--command", "echo boom >&2; exit 3")
	h.must("worker", "start", "--drain", "--no-spool")

	j := h.show("flaky")
	if j.State != "dead" || j.Attempts != 2 || len(j.Runs) != 2 {
		t.Fatalf("after drain: state %s, attempts %d, runs %d; want dead, 2, 2", j.State, j.Attempts, len(j.Runs))
	}
	if j.LastError != "exit status 3" || j.ExitCode == nil || *j.ExitCode != 3 {
		t.Errorf("last_error %q, exit_code %v; want \"exit status 3\", 3", j.LastError, j.ExitCode)
	}
	// backoff_base 1: the second run starts no sooner than 1^1 = 1 s after the first ends.
	if gap := j.Runs[1].StartedAt.Sub(j.Runs[0].EndedAt); gap < time.Second {
		t.Errorf("second run started %v after the first ended; want ≥ 1s backoff", gap)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "dead", "flaky.json")); err != nil {
		t.Errorf("dead/flaky.json: %v", err)
	}

	h.must("dlq", "retry", "flaky")
	j = h.show("flaky")
	if j.State != "pending" || j.Attempts != 0 || len(j.Runs) != 2 {
		t.Errorf("after dlq retry: state %s, attempts %d, runs %d; want pending, 0, 2 kept", j.State, j.Attempts, len(j.Runs))
	}
	if _, err := os.Stat(filepath.Join(h.dir, "dead", "flaky.json")); !os.IsNotExist(err) {
		t.Errorf("dead/flaky.json still there after dlq retry (err %v)", err)
	}
}

func TestManyWorkersRunEachJobOnce(t *testing.T) {
	h := newHome(t)
	out := filepath.Join(t.TempDir(), "out")
	var batch strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&batch, `{"id": "j%03d", "command": "echo j%03d >> %s"}`+"\n", i, i, out)
	}
	cmd := h.command("enqueue", "-q", "-")
	cmd.Stdin = strings.NewReader(batch.String())
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("enqueue batch: %v\n%s", err, b)
	}
	var workers []*proc
	for i := 0; i < 3; i++ {
		workers = append(workers, h.start("worker", "start", "--count", "4", "--drain", "--no-spool"))
	}
	for _, w := range workers {
		if code := w.exit(t, 2*time.Minute); code != 0 {
			t.Fatalf("worker exit %d\n%s", code, w.stderr)
		}
	}
	seen := lines(t, out)
	if len(seen) != 300 {
		t.Errorf("%d distinct lines, want 300", len(seen))
	}
	for l, n := range seen {
		if n != 1 {
			t.Errorf("line %s written %d times", l, n)
		}
	}
	if n := h.count("completed"); n != 300 {
		t.Errorf("%d completed, want 300", n)
	}
}

func TestWorkerKilledMidJobIsRecovered(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	out, started := filepath.Join(dir, "out"), filepath.Join(dir, "started")
	h.must("enqueue", "--id", "slow", "--command",
		fmt.Sprintf("touch %s; sleep 2; echo done >> %s", started, out))
	w := h.killMidJob(started, "--no-spool")

	recovered := time.Now()
	w2 := h.start("worker", "start", "--no-spool")
	h.must("wait", "--timeout", "10s", "slow")
	t.Logf("recovered and completed %v after the kill", time.Since(recovered))
	lost := fmt.Sprintf(`queuectl: job slow: run 1 lost with worker \S+-%d-\w+ \(pid %d on \S+\) recovered; pending again`,
		w.cmd.Process.Pid, w.cmd.Process.Pid)
	if !regexp.MustCompile(lost).MatchString(w2.stderr.String()) {
		t.Errorf("the recovering worker did not say it recovered the run:\n%s", w2.stderr)
	}

	if got := lines(t, out); len(got) != 1 || got["done"] != 1 {
		t.Errorf("out has %v, want the line exactly once (the killed run's orphan must not write)", got)
	}
	j := h.show("slow")
	if j.State != "completed" || j.Attempts != 1 || len(j.Runs) != 2 || j.Runs[0].Outcome != "lost" {
		t.Errorf("state %s attempts %d runs %d; want completed, 1 (the lost run not counted), 2 with the first lost", j.State, j.Attempts, len(j.Runs))
	}
	if n := h.count("processing"); n != 0 {
		t.Errorf("%d jobs still processing", n)
	}
}

// TestDrainRecoversRunOfKilledWorker: a worker is killed (kill -9) while
// it runs a job, and the next `worker start --drain` (a nightly cron) finds
// the job processing under a dead worker. The drain recovers the run, runs
// the job again, and only then exits 0, saying nothing of a canceled
// context.
func TestDrainRecoversRunOfKilledWorker(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	runs, first := filepath.Join(dir, "runs"), filepath.Join(dir, "first")
	h.must("enqueue", "--id", "nightly", "--command",
		fmt.Sprintf("echo run >> %s; [ -e %s ] || { touch %s; sleep 1000; }", runs, first, first))
	h.killMidJob(first, "--no-spool")

	_, stderr, code := h.run("worker", "start", "--drain", "--no-spool")
	if code != 0 {
		t.Fatalf("worker start --drain: exit %d, want 0\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "job nightly: run 1 lost with worker") || strings.Contains(stderr, "context canceled") {
		t.Errorf("the draining worker did not say it recovered the run, or said a canceled context:\n%s", stderr)
	}
	j := h.show("nightly")
	if j.State != "completed" || j.Attempts != 1 || len(j.Runs) != 2 || j.Runs[0].Outcome != "lost" {
		t.Errorf("after the drain: state %s attempts %d runs %d; want completed, 1, 2 with the first lost\n%s", j.State, j.Attempts, len(j.Runs), stderr)
	}
	if got := lines(t, runs); got["run"] != 2 {
		t.Errorf("runs has %v, want the job run twice", got)
	}
}

func TestJobsWaitForAWorker(t *testing.T) {
	h := newHome(t)
	for i := 0; i < 5; i++ {
		h.must("enqueue", "--id", fmt.Sprintf("later%d", i), "--command", "true")
	}
	if n := h.count("pending"); n != 5 {
		t.Fatalf("%d pending before any worker, want 5", n)
	}
	// With the spool watcher on: a drain must end the watcher too.
	h.must("worker", "start", "--drain", "--count", "2")
	if n := h.count("completed"); n != 5 {
		t.Errorf("%d completed after a worker ran, want 5", n)
	}
}

func TestWorkerStopFromAnotherProcess(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		h.must("enqueue", "--id", fmt.Sprintf("s%d", i), "--command",
			fmt.Sprintf("touch %s/started%d; sleep 1; echo ok > %s/done%d", dir, i, dir, i))
	}
	w1 := h.start("worker", "start") // also watching the spool: the watcher must stop too
	w2 := h.start("worker", "start", "--no-spool")
	waitFor(t, 10*time.Second, "both jobs to start", func() bool {
		_, err0 := os.Stat(filepath.Join(dir, "started0"))
		_, err1 := os.Stat(filepath.Join(dir, "started1"))
		return err0 == nil && err1 == nil
	})
	h.must("worker", "stop")
	for _, w := range []*proc{w1, w2} {
		if code := w.exit(t, 10*time.Second); code != 0 {
			t.Errorf("worker exit %d after worker stop, want 0\n%s", code, w.stderr)
		}
	}
	if n := h.count("completed"); n != 2 {
		t.Errorf("%d completed, want 2: a stopped worker finishes its current job", n)
	}
	h.must("worker", "stop", "--wait", "--timeout", "5s")
}

// TestWorkerOutlivesItsStderrReader: a worker whose stderr is a pipe
// whose reader went away (`worker start --drain 2>&1 | head -1`, a log
// collector restarted) runs its jobs on without its lines, instead of
// dying of SIGPIPE with a job half-run and the rest left pending. Its
// jobs still get SIGPIPE at its default.
func TestWorkerOutlivesItsStderrReader(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	goOn := filepath.Join(dir, "go-on")
	h.must("enqueue", "--id", "first", "--command", "until [ -e "+goOn+" ]; do sleep 0.01; done")
	h.must("enqueue", "--id", "second", "--command", "grep SigIgn /proc/self/status")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := h.command("worker", "start", "--drain", "--no-spool")
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan struct{})
	go func() { err = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	// The reader takes the start-up line and goes, as head -1 does.
	if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
		t.Fatalf("the worker's first line: %v", err)
	}
	r.Close()
	if err := os.WriteFile(goOn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker still runs 30s after its first job was let go")
	}
	if code := shellCode(err); code != 0 {
		t.Errorf("worker exit %d once its stderr's reader went, want 0 (a drain that ran every job)", code)
	}
	for _, id := range []string{"first", "second"} {
		if j := h.show(id); j.State != "completed" {
			t.Errorf("job %s is %s, want completed", id, j.State)
		}
	}
	var ignored uint64
	if _, err := fmt.Sscanf(h.must("logs", "second"), "SigIgn: %x", &ignored); err != nil || ignored&(1<<(syscall.SIGPIPE-1)) != 0 {
		t.Errorf("the job's ignored signals %#x (%v): SIGPIPE among them", ignored, err)
	}
}

func TestSecondSignalPutsJobBack(t *testing.T) {
	h := newHome(t)
	started := filepath.Join(t.TempDir(), "started")
	h.must("enqueue", "--id", "long", "--command", "touch "+started+"; sleep 60")
	w := h.start("worker", "start", "--no-spool")
	waitFor(t, 10*time.Second, "the job to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	w.signal(t, syscall.SIGTERM)
	// Signals of one kind do not queue: wait until the first is seen.
	waitFor(t, 10*time.Second, "the worker to say it is stopping", func() bool {
		return strings.Contains(w.stderr.String(), "signal again")
	})
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, 10*time.Second); code != 130 {
		t.Errorf("exit %d after two signals, want 130\n%s", code, w.stderr)
	}
	j := h.show("long")
	if j.State != "pending" || j.Attempts != 0 {
		t.Errorf("state %s attempts %d, want pending 0", j.State, j.Attempts)
	}
}

// TestSignalAfterWorkerStopStopsJobs: a worker that `worker stop` asked
// to stop says "signal again to stop them now" of its running jobs, as
// after a first signal, and one signal then stops them: worker stop was
// the first stage. It once took that signal for the first, and went on
// waiting for a job that ignores nothing but had an hour to run.
func TestSignalAfterWorkerStopStopsJobs(t *testing.T) {
	h := newHome(t)
	started := filepath.Join(t.TempDir(), "started")
	h.must("enqueue", "--id", "long", "--command", "touch "+started+"; sleep 3600")
	w := h.start("worker", "start", "--no-spool")
	waitFor(t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	h.must("worker", "stop")
	waitFor(t, 30*time.Second, "the worker to say it is stopping", func() bool {
		return strings.Contains(w.stderr.String(), "signal again to stop them now")
	})
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, 30*time.Second); code != 130 {
		t.Errorf("exit %d after worker stop and one signal, want 130\n%s", code, w.stderr)
	}
	if j := h.show("long"); j.State != "pending" || j.Attempts != 0 {
		t.Errorf("state %s attempts %d, want pending 0", j.State, j.Attempts)
	}
}

// TestIgnoredInterruptStaysIgnored: a worker started with SIGINT ignored,
// as a background command of a script is (`queuectl worker start &`),
// leaves a SIGINT alone: a Ctrl-C at the script's terminal is for its
// foreground. So does one started under nohup (SIGHUP ignored) a hangup.
// It goes on claiming jobs, which do not inherit the ignored signal (run
// directly, `kill -HUP $$` ends a job; under a nohup'd worker it went on);
// SIGTERM still stops it.
func TestIgnoredInterruptStaysIgnored(t *testing.T) {
	for name, sig := range map[string]syscall.Signal{"INT": syscall.SIGINT, "HUP": syscall.SIGHUP} {
		t.Run(name, func(t *testing.T) {
			h := newHome(t)
			w := h.startRegistered(ignoring(h.command("worker", "start", "--no-spool"), name))
			w.signal(t, sig)
			h.must("enqueue", "--id", "after", "--command", "grep SigIgn /proc/self/status")
			if _, stderr, code := h.run("wait", "--timeout", "30s", "after"); code != 0 {
				t.Fatalf("the job enqueued after %v: wait exit %d, want 0 (the worker claims on)\n%s\nworker: %s", sig, code, stderr, w.stderr)
			}
			// Its jobs get the signal at its default, as a worker started
			// otherwise gives it: a shell cannot trap a signal ignored when it
			// started.
			var ignored uint64
			if _, err := fmt.Sscanf(h.must("logs", "after"), "SigIgn: %x", &ignored); err != nil || ignored&(1<<(sig-1)) != 0 {
				t.Errorf("the job's ignored signals %#x (%v): %v among them", ignored, err, sig)
			}
			if strings.Contains(w.stderr.String(), "stopping") {
				t.Errorf("the worker took the ignored %v for a stop:\n%s", sig, w.stderr)
			}
			w.signal(t, syscall.SIGTERM)
			if code := w.exit(t, 30*time.Second); code != 0 {
				t.Errorf("worker exit %d after SIGTERM, want 0\n%s", code, w.stderr)
			}
		})
	}
}

// TestRetentionSetReachesRunningWorker: `config set log-retention` on a
// running worker removes the old logs within a heartbeat, not at the
// worker's next clean-up ten minutes on, and both say so.
func TestRetentionSetReachesRunningWorker(t *testing.T) {
	h := newHome(t)
	h.must("config", "set", "heartbeat-interval", "1s")
	h.must("config", "set", "lease", "10s")
	w := h.start("worker", "start", "--no-spool")
	h.must("enqueue", "--id", "old", "--command", "echo out")
	h.must("wait", "--timeout", "30s", "old")
	out := filepath.Join(h.dir, "logs", "old", "1.out")
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("the run's log: %v", err)
	}
	// The run must have ended longer ago than the retention set below.
	waitFor(t, 30*time.Second, "the run to have ended over a second ago", func() bool {
		var job struct {
			FinishedAt time.Time `json:"finished_at"`
		}
		return json.Unmarshal([]byte(h.must("show", "--json", "old")), &job) == nil &&
			!job.FinishedAt.IsZero() && time.Since(job.FinishedAt) > 2*time.Second
	})
	_, stderr, code := h.run("config", "set", "log-retention", "1s")
	if code != 0 || !strings.Contains(stderr, "1 running worker(s) apply it within a heartbeat") {
		t.Errorf("config set log-retention with a worker running: exit %d, stderr %q", code, stderr)
	}
	waitFor(t, 30*time.Second, "the worker to remove the old run's log", func() bool {
		_, err := os.Stat(out)
		return os.IsNotExist(err) && strings.Contains(w.stderr.String(), "log-retention: removed 1 log file(s)")
	})
	if strings.Contains(w.stderr.String(), "log-retention from the next run on") {
		t.Errorf("the worker said log-retention applies from its next run on:\n%s", w.stderr)
	}
}

// TestConfigSetReachesRunningWorker: `config set` reaches a running
// worker within a heartbeat: its runs from then on use the new limits
// and hooks, and it says which settings changed. A key that paces the
// worker's own loops waits for its next start, and config set says so.
func TestConfigSetReachesRunningWorker(t *testing.T) {
	h := newHome(t)
	h.must("config", "set", "heartbeat-interval", "1s")
	h.must("config", "set", "lease", "10s")
	w := h.startRegistered(h.command("worker", "start", "--no-spool"))
	hooked := filepath.Join(t.TempDir(), "hooked")
	// Set first: the heartbeat that reads the keys below has read it.
	if _, stderr, _ := h.run("config", "set", "max-retries", "5"); !strings.Contains(stderr, "max-retries applies to the jobs enqueued from now on") {
		t.Errorf("config set max-retries with a worker running: stderr %q", stderr)
	}
	h.must("config", "set", "limit-nofile", "64")
	_, stderr, code := h.run("config", "set", "on-dead", "echo $QUEUECTL_JOB_ID >> "+hooked)
	if code != 0 || !strings.Contains(stderr, "1 running worker(s) apply it within a heartbeat") {
		t.Errorf("config set on-dead with a worker running: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, _ := h.run("config", "set", "poll-interval", "2s"); !strings.Contains(stderr, "keep the old poll-interval until they start again") {
		t.Errorf("config set poll-interval with a worker running: stderr %q", stderr)
	}
	// The three config sets may fall on either side of a heartbeat: one
	// line or several.
	said := func(key, when string) bool {
		for _, line := range strings.Split(w.stderr.String(), "\n") {
			if _, changed, ok := strings.Cut(line, "settings changed: "); ok && regexp.MustCompile(`\b`+key+`\b[^;]*`+when).MatchString(changed) {
				return true
			}
		}
		return false
	}
	waitFor(t, 30*time.Second, "the worker to say it read the new settings", func() bool {
		return said("on-dead", "from the next run on") && said("limit-nofile", "from the next run on") &&
			said("poll-interval", "once this worker starts again")
	})
	h.must("enqueue", "--id", "nofile", "--command", "ulimit -n")
	h.must("enqueue", "--id", "dies", "--max-retries", "1", "--command", "exit 3")
	h.run("wait", "--timeout", "30s", "nofile", "dies")
	if said("max-retries", "") {
		t.Errorf("the worker said max-retries changed, which only an enqueue reads:\n%s", w.stderr)
	}
	if out := h.must("logs", "nofile"); strings.TrimSpace(out) != "64" {
		t.Errorf("ulimit -n in a run after config set limit-nofile 64: %q", out)
	}
	waitFor(t, 30*time.Second, "the on-dead hook set while the worker ran", func() bool {
		b, _ := os.ReadFile(hooked)
		return strings.TrimSpace(string(b)) == "dies"
	})
}

// ignoring makes cmd start with signal sig (INT, HUP…) ignored, as a
// script's background command starts with SIGINT: through a shell that
// ignores it and execs cmd (an ignored signal stays ignored across exec).
func ignoring(cmd *exec.Cmd, sig string) *exec.Cmd {
	cmd.Args = append([]string{"sh", "-c", "trap '' " + sig + `; exec "$0" "$@"`, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	return cmd
}

// TestHangupStopsWorkerGracefully: a worker whose terminal or ssh session
// closes (SIGHUP) stops as on SIGTERM, letting its running job finish,
// instead of dying of the signal with the job cut off, left processing
// until some worker recovers it and runs it again. Under nohup (SIGHUP
// ignored at start) it runs on.
func TestHangupStopsWorkerGracefully(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
	w := h.start("worker", "start", "--no-spool")
	h.must("enqueue", "--id", "hup", "--command",
		"touch "+started+"; while [ ! -e "+release+" ]; do sleep 0.05; done; echo finished")
	waitFor(t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	w.signal(t, syscall.SIGHUP)
	waitFor(t, 30*time.Second, "the worker to say it stops", func() bool {
		return strings.Contains(w.stderr.String(), "stopping: letting 1 running job(s) finish")
	})
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := w.exit(t, 30*time.Second); code != 0 {
		t.Errorf("worker exit %d after SIGHUP, want 0\n%s", code, w.stderr)
	}
	if out := h.must("logs", "hup"); out != "finished\n" {
		t.Errorf("logs hup = %q, want %q: the job was cut off", out, "finished\n")
	}
	if _, stderr, code := h.run("wait", "--timeout", "1s", "hup"); code != 0 {
		t.Errorf("wait hup: exit %d, want 0 (completed in one run)\n%s", code, stderr)
	}

	// Under nohup, a hangup is not for the worker.
	nohup := h.startRegistered(ignoring(h.command("worker", "start", "--no-spool"), "HUP"))
	nohup.signal(t, syscall.SIGHUP)
	h.must("enqueue", "--id", "after", "--command", "true")
	if _, stderr, code := h.run("wait", "--timeout", "30s", "after"); code != 0 {
		t.Fatalf("the job enqueued after SIGHUP under nohup: wait exit %d, want 0\n%s\nworker: %s", code, stderr, nohup.stderr)
	}
	nohup.signal(t, syscall.SIGTERM)
	if code := nohup.exit(t, 30*time.Second); code != 0 {
		t.Errorf("worker exit %d after SIGTERM, want 0\n%s", code, nohup.stderr)
	}
}

// TestLogsFollowSaysWhyARunEnded: logs -f, going on from a run lost with
// its worker to the next, says how that run ended, from the run's own
// record: it printed the job's last error, which a lost run does not set
// ("run 1 ended (); following run 2").
func TestLogsFollowSaysWhyARunEnded(t *testing.T) {
	h := newHome(t)
	started := filepath.Join(t.TempDir(), "started")
	h.must("enqueue", "--id", "lost", "--command",
		fmt.Sprintf(`[ -e %s ] || { echo one; touch %s; sleep 1000; }`, started, started))
	h.killMidJob(started, "--no-spool")
	follow := h.start("logs", "-f", "lost")
	// The follow must be on run 1 before a worker recovers it: one that
	// began after would follow run 2 alone, with nothing to say.
	waitFor(t, 30*time.Second, "logs -f to print run 1", func() bool { return follow.stdout.String() == "one\n" })
	h.start("worker", "start", "--no-spool")
	if code := follow.exit(t, 30*time.Second); code != 0 {
		t.Fatalf("logs -f lost: exit %d\n%s", code, follow.stderr)
	}
	if want := "queuectl: job lost: run 1 ended (worker lost); following run 2\n"; follow.stderr.String() != want {
		t.Errorf("logs -f lost: stderr %q, want %q", follow.stderr, want)
	}
}

// TestShowSaysRunOfGoneWorkerIsLost: show of a job whose worker was killed
// (kill -9) while no other worker runs says that the run is lost and runs
// again once a worker starts: it showed the run as running, for ever
// longer, with nothing to say that nothing ran it.
func TestShowSaysRunOfGoneWorkerIsLost(t *testing.T) {
	h := newHome(t)
	started := filepath.Join(t.TempDir(), "started")
	h.must("enqueue", "--id", "orphaned", "--command", fmt.Sprintf("touch %s; sleep 1000", started))
	w := h.killMidJob(started, "--no-spool")
	_, stderr, code := h.run("show", "orphaned")
	gone := workerOf(t, h, w.cmd.Process.Pid)
	want := fmt.Sprintf("queuectl: warning: worker %s (pid %d on %s) is gone without stopping: its run is lost, and the job runs again once a worker starts (queuectl worker start)\n",
		gone.ID, gone.PID, gone.Host)
	if code != 0 || stderr != want {
		t.Errorf("show orphaned: exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	// A live worker's run draws no such line.
	h.start("worker", "start", "--no-spool")
	waitFor(t, 30*time.Second, "the job to run again", func() bool { return len(h.show("orphaned").Runs) == 2 })
	if _, stderr, _ := h.run("show", "orphaned"); stderr != "" {
		t.Errorf("show of a job a live worker runs: stderr %q, want none", stderr)
	}
}

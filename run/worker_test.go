package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	_ "github.com/queuectl/queuectl/claim/sqlite" // the SQLite engine, for claim.Open
)

func mustOpenStore(tb testing.TB) *claim.Store {
	tb.Helper()
	s, err := claim.Open(filepath.Join(tb.TempDir(), "queue.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func newWorker(tb testing.TB, s *claim.Store) *Worker {
	tb.Helper()
	cfg := claim.DefaultConfig()
	cfg.PollInterval = 50 * time.Millisecond
	cfg.StopTimeout = time.Second
	return &Worker{Store: s, Config: cfg, Slots: 2, LogDir: filepath.Join(tb.TempDir(), "logs"), Drain: true,
		Events: func(e Event) { tb.Log(e) }}
}

func enqueue(tb testing.TB, s *claim.Store, nj claim.NewJob) claim.Job {
	tb.Helper()
	r, err := s.Enqueue(context.Background(), nj)
	if err != nil {
		tb.Fatal(err)
	}
	return r.Job
}

func get(tb testing.TB, s *claim.Store, id string) claim.Job {
	tb.Helper()
	j, err := s.Get(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

func drain(tb testing.TB, w *Worker) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.Run(ctx, ctx); err != nil {
		tb.Fatalf("Run = %v, want nil", err)
	}
}

func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTimeoutKillsWholeProcessGroup(t *testing.T) {
	s := mustOpenStore(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	timeout, one := 300*time.Millisecond, 1
	enqueue(t, s, claim.NewJob{ID: "slow", Command: "sleep 30 & echo $! > " + pidFile + "; wait",
		Timeout: &timeout, MaxRetries: &one})
	drain(t, newWorker(t, s))

	j := get(t, s, "slow")
	if j.State != claim.Dead || !strings.HasPrefix(j.LastError, "timed out after 300ms") {
		t.Errorf("state %s, last_error %q; want dead, timed out after 300ms", j.State, j.LastError)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	waitFor(t, "the job's background child to be killed", func() bool { return !alive(pid) })
}

func TestEnvCwdAndSeparateLogs(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	enqueue(t, s, claim.NewJob{ID: "env", Command: `echo "$GREETING from $(pwd) as $QUEUECTL_JOB_ID"; echo warn >&2`,
		Env: map[string]string{"GREETING": "hello"}, Cwd: dir})
	w := newWorker(t, s)
	drain(t, w)

	out, _ := os.ReadFile(filepath.Join(w.LogDir, "env", "1.out"))
	if want := "hello from " + dir + " as env\n"; string(out) != want {
		t.Errorf("stdout log = %q, want %q", out, want)
	}
	errLog, _ := os.ReadFile(filepath.Join(w.LogDir, "env", "1.err"))
	if string(errLog) != "warn\n" {
		t.Errorf("stderr log = %q, want %q", errLog, "warn\n")
	}
	fi, err := os.Stat(filepath.Join(w.LogDir, "env", "1.out"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}

func TestReaperRecoversRunOfDeadProcess(t *testing.T) {
	s := mustOpenStore(t)
	enqueue(t, s, claim.NewJob{ID: "orphaned", Command: "true"})
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	host := HostID()
	c := claim.Claimant{WorkerID: "crashed", Host: host, PID: gone.Process.Pid, Lease: time.Hour, LogDir: t.TempDir()}
	if _, _, err := s.Claim(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	w := newWorker(t, s)
	w.host, w.id = host, "reaper"
	w.reapOnce(context.Background(), context.Background())

	j := get(t, s, "orphaned")
	if j.State != claim.Pending || j.Attempts != 0 || j.Lost != 1 {
		t.Errorf("after reap: state %s attempts %d lost %d; want pending 0 1", j.State, j.Attempts, j.Lost)
	}
}

func TestReaperLeavesLiveLeasedRunAlone(t *testing.T) {
	s := mustOpenStore(t)
	enqueue(t, s, claim.NewJob{ID: "busy", Command: "true"})
	host := HostID()
	c := claim.Claimant{WorkerID: "other", Host: host, PID: os.Getpid(), Lease: time.Hour, LogDir: t.TempDir()}
	if _, _, err := s.Claim(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	w := newWorker(t, s)
	w.host, w.id = host, "reaper"
	w.reapOnce(context.Background(), context.Background())
	if j := get(t, s, "busy"); j.State != claim.Processing {
		t.Errorf("state %s, want processing: its worker is alive and its lease current", j.State)
	}
}

func TestHardStopPutsRunningJobBack(t *testing.T) {
	s := mustOpenStore(t)
	started := filepath.Join(t.TempDir(), "started")
	enqueue(t, s, claim.NewJob{ID: "long", Command: "touch " + started + "; sleep 30"})
	w := newWorker(t, s)
	w.Drain = false
	soft, stopSoft := context.WithCancel(context.Background())
	hard, stopHard := context.WithCancel(context.Background())
	defer stopHard()
	done := make(chan error, 1)
	go func() { done <- w.Run(soft, hard) }()
	waitFor(t, "the job to start", func() bool { _, err := os.Stat(started); return err == nil })
	stopSoft()
	stopHard()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInterrupted) {
			t.Errorf("Run = %v, want ErrInterrupted", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after a hard stop")
	}
	if j := get(t, s, "long"); j.State != claim.Pending || j.Attempts != 0 {
		t.Errorf("state %s attempts %d, want pending 0", j.State, j.Attempts)
	}
}

// A hard stop (the second signal) of a job that traps TERM waits for the
// stop-timeout's KILL, 30 s by default; the worker says so a second after
// the TERM, as it does of a job that timed out, instead of nothing until
// then, when a third Ctrl-C does nothing either.
func TestHardStopSaysWhatGoesOnAfterTerm(t *testing.T) {
	s := mustOpenStore(t)
	started := filepath.Join(t.TempDir(), "started")
	enqueue(t, s, claim.NewJob{ID: "stubborn", Command: "trap '' TERM; touch " + started + "; sleep 30"})
	w := newWorker(t, s)
	w.Drain = false
	w.Config.StopTimeout = 3 * time.Second
	var log logLines
	w.Events = func(e Event) { log.logf("%s", e) }
	soft, stopSoft := context.WithCancel(context.Background())
	hard, stopHard := context.WithCancel(context.Background())
	defer stopHard()
	done := make(chan error, 1)
	go func() { done <- w.Run(soft, hard) }()
	waitFor(t, "the job to start", func() bool { _, err := os.Stat(started); return err == nil })
	stopSoft()
	stopHard()
	waitFor(t, "the worker to say the job goes on after SIGTERM", func() bool {
		return strings.Contains(log.String(), "stopping: 1 running job(s) go on after SIGTERM; killed 3s after it")
	})
	select {
	case err := <-done:
		if !errors.Is(err, ErrInterrupted) {
			t.Errorf("Run = %v, want ErrInterrupted", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after a hard stop")
	}
	if j := get(t, s, "stubborn"); j.State != claim.Pending || j.Attempts != 0 {
		t.Errorf("state %s attempts %d, want pending 0", j.State, j.Attempts)
	}
}

func TestFollowCopiesUntilTheRunEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "1.out")
	var ended atomic.Bool
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Follow(context.Background(), &out, path, 5*time.Millisecond, func() (bool, error) { return ended.Load(), nil })
	}()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("one\n")
	f.WriteString("two\n")
	f.Close()
	ended.Store(true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out.String() != "one\ntwo\n" {
		t.Errorf("Follow wrote %q, want %q", out.String(), "one\ntwo\n")
	}
}

// A stream that printed nothing leaves no file, and a job that printed
// nothing no directory: a million silent jobs cost no inode.
func TestSilentStreamsLeaveNoFiles(t *testing.T) {
	s := mustOpenStore(t)
	enqueue(t, s, claim.NewJob{ID: "quiet", Command: "true"})
	enqueue(t, s, claim.NewJob{ID: "talks", Command: "echo out"})
	enqueue(t, s, claim.NewJob{ID: "warns", Command: "echo warn >&2"})
	w := newWorker(t, s)
	drain(t, w)

	for _, id := range []string{"quiet", "talks", "warns"} {
		if j := get(t, s, id); j.State != claim.Completed {
			t.Errorf("job %s is %s (%s), want completed", id, j.State, j.LastError)
		}
	}
	for path, want := range map[string]bool{
		"quiet": false, "talks/1.out": true, "talks/1.err": false, "warns/1.out": false, "warns/1.err": true,
	} {
		_, err := os.Lstat(filepath.Join(w.LogDir, path))
		if got := err == nil; got != want {
			t.Errorf("logs/%s exists: %v, want %v (%v)", path, got, want, err)
		}
	}
	quiet := claim.Run{Host: HostID(), StdoutPath: filepath.Join(w.LogDir, "quiet", "1.out")}
	if text, from, err := readLog(Log{Run: quiet}); err != nil || text != "" || from != FromFile {
		t.Errorf("reading a silent stream = %q, %v, from %v; want empty, nil, the file", text, err, from)
	}
}

// A job whose logs cannot be written is not run and uses up no attempt: the
// worker says what and where, and tries again later; once the log
// directory can be made, the job runs.
func TestUnwritableLogsPostponeTheJob(t *testing.T) {
	s := mustOpenStore(t)
	one := 1
	ran := filepath.Join(t.TempDir(), "ran")
	enqueue(t, s, claim.NewJob{ID: "loud", Command: "touch " + ran + "; head -c 1000000 /dev/zero", MaxRetries: &one})
	w := newWorker(t, s)
	w.Drain = false
	w.faultRetry = 50 * time.Millisecond
	if err := os.MkdirAll(w.LogDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A file where the job's log directory would go.
	blocker := filepath.Join(w.LogDir, "loud")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	defer func() { cancel(); <-done }()
	var j claim.Job
	waitFor(t, "the job to be put back with the reason", func() bool {
		j = get(t, s, "loud")
		return j.State == claim.Pending && strings.Contains(j.LastError, "log directory "+blocker+" is not a directory")
	})
	if j.Attempts != 0 || j.Lost != 0 {
		t.Errorf("attempts %d, lost %d after the logs could not be written, want 0, 0", j.Attempts, j.Lost)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the job ran although its output could not be kept")
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job to complete once its logs can be written", func() bool { return get(t, s, "loud").State == claim.Completed })
}

// TestUnwritableLogsDirLeavesOneRecord: while logs/ cannot be written, the
// worker claims nothing after the first job it had to put back, so the
// wait leaves one run record, not one per retry.
func TestUnwritableLogsDirLeavesOneRecord(t *testing.T) {
	s := mustOpenStore(t)
	enqueue(t, s, claim.NewJob{ID: "a", Command: "echo a"})
	w := newWorker(t, s)
	w.Drain = false
	w.faultRetry = 20 * time.Millisecond
	// A file where logs/ should be: no log can be written.
	if err := os.WriteFile(w.LogDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the job to be put back with the reason", func() bool {
		return strings.Contains(get(t, s, "a").LastError, "not a directory")
	})
	// Let twenty retry intervals pass, in each of which the job would be
	// claimed and put back again: what is tested is that nothing happens.
	time.Sleep(20 * w.faultRetry)
	if err := os.Remove(w.LogDir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job to complete once logs/ can be made", func() bool { return get(t, s, "a").State == claim.Completed })
	runs, err := s.Runs(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		var outcomes []string
		for _, r := range runs {
			outcomes = append(outcomes, r.Outcome)
		}
		t.Errorf("runs of a: %v, want one interrupted (the put-back) and the completed one", outcomes)
	}
}

// TestRunStartIsRecorded: a run that ends at once has its process group and
// the start of its command recorded with its end, in the same write; one
// that goes on has them recorded while it runs (startRecordDelay), for a
// reaper to find should its worker die.
func TestRunStartIsRecorded(t *testing.T) {
	s := mustOpenStore(t)
	release := filepath.Join(t.TempDir(), "release")
	enqueue(t, s, claim.NewJob{ID: "short", Command: "true"})
	enqueue(t, s, claim.NewJob{ID: "long", Command: "while [ ! -e " + release + " ]; do sleep 0.05; done", Priority: -1})
	w := newWorker(t, s)
	w.Slots = 1
	done := make(chan struct{})
	go func() { defer close(done); drain(t, w) }()
	var running claim.Run
	waitFor(t, "the long job's start recorded while it runs", func() bool {
		runs, err := s.Runs(context.Background(), "long")
		if err != nil || len(runs) != 1 {
			return false
		}
		running = runs[0]
		return running.PGID > 0
	})
	if !running.EndedAt.IsZero() || running.ExecAt.Before(running.StartedAt) {
		t.Errorf("long run = %+v, want running, its command started after its claim", running)
	}
	os.WriteFile(release, nil, 0o600)
	<-done
	for _, id := range []string{"short", "long"} {
		runs, err := s.Runs(context.Background(), id)
		if err != nil || len(runs) != 1 || runs[0].PGID <= 0 || runs[0].ExecAt.IsZero() || runs[0].EndedAt.Before(runs[0].ExecAt) {
			t.Errorf("%s: runs = %+v (%v), want one ended, with its process group and when its command started", id, runs, err)
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// A job that goes on after the SIGTERM of its timeout runs until its
// stop-timeout: the worker says so when it does, instead of nothing until
// the job is killed, up to 30 s later, while show says it has run past its
// timeout.
func TestTimeoutOfJobIgnoringTermIsTold(t *testing.T) {
	timeoutIgnoredIsTold(t, "stubborn", `trap "" TERM; sleep 30`)
}

// As TestTimeoutOfJobIgnoringTermIsTold, when what ignores the TERM is not
// the job's shell but a process it started (run -- sh -c '…' stores such
// a command): the shell is gone, the job's process group is not.
func TestTimeoutOfJobsChildIgnoringTermIsTold(t *testing.T) {
	timeoutIgnoredIsTold(t, "child", `sh -c 'trap "" TERM; sleep 30'`)
}

// timeoutIgnoredIsTold runs job id, command, with a timeout of 200ms and a
// stop-timeout of 3s, and checks that it died of the timeout and that the
// worker said it went on after the TERM.
func timeoutIgnoredIsTold(t *testing.T, id, command string) {
	t.Helper()
	s := mustOpenStore(t)
	timeout, one := 200*time.Millisecond, 1
	enqueue(t, s, claim.NewJob{ID: id, Command: command, Timeout: &timeout, MaxRetries: &one})
	w := newWorker(t, s)
	w.Config.StopTimeout = 3 * time.Second
	var log logLines
	w.Events = func(e Event) { log.logf("%s", e) }
	drain(t, w)

	if j := get(t, s, id); j.State != claim.Dead || !strings.HasPrefix(j.LastError, "timed out after 200ms") {
		t.Errorf("state %s, last_error %q; want dead, timed out after 200ms", j.State, j.LastError)
	}
	want := "job " + id + " timed out after 200ms and goes on after SIGTERM; killed 3s after it"
	if logged := log.String(); !strings.Contains(logged, want) {
		t.Errorf("worker log:\n%s\nwant a line %q", logged, want)
	}
}

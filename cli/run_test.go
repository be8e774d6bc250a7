package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunStreamsWhileTheJobRuns: the job's first line reaches run's stdout
// while the job still runs, and run exits with the job's code.
func TestRunStreamsWhileTheJobRuns(t *testing.T) {
	h := newHome(t)
	h.start("worker", "start", "--no-spool")
	g := newGate(t)
	r := h.start("run", "--id", "gated", "--max-retries", "1", "--shell", g.command()+"; echo bye >&2; exit 5")
	g.waitStarted(t)
	waitFor(t, 30*time.Second, "run to print the job's first line", func() bool {
		return r.stdout.String() == "one\n"
	})
	select {
	case <-r.done:
		t.Fatalf("run ended while its job was still running\nstderr: %s", r.stderr)
	default:
	}
	g.release(t)
	if code := r.exit(t, 30*time.Second); code != 5 {
		t.Errorf("run exit %d, want the job's 5\nstderr: %s", code, r.stderr)
	}
	if got := r.stdout.String(); got != "one\ntwo\n" {
		t.Errorf("run stdout %q, want %q", got, "one\ntwo\n")
	}
	if !strings.Contains("\n"+r.stderr.String(), "\nbye\n") {
		t.Errorf("run stderr lacks the job's stderr line:\n%s", r.stderr)
	}
}

// TestRunInterrupted: Ctrl-C ends run with 130. With --detach-on-interrupt
// the job runs on to its end.
func TestRunInterrupted(t *testing.T) {
	h := newHome(t)
	h.start("worker", "start", "--no-spool")
	g := newGate(t)
	r := h.start("run", "--id", "detached", "--detach-on-interrupt", "--shell", g.command())
	g.waitStarted(t)
	r.signal(t, syscall.SIGINT)
	if code := r.exit(t, 30*time.Second); code != 130 {
		t.Fatalf("run exit %d after SIGINT, want 130\nstderr: %s", code, r.stderr)
	}
	if !strings.Contains(r.stderr.String(), "queuectl logs -f detached") {
		t.Errorf("run does not say how to follow the detached job:\n%s", r.stderr)
	}
	g.release(t)
	h.must("wait", "detached")
}

// TestCtrlCEndsAShellLoopOfRun: Ctrl-C reaches a script and the run it
// waits for (the terminal's foreground process group); run cancels its job
// and dies of SIGINT, so that the script stops too, as it would for the
// command run stands in for. A run that exited 130 instead was taken by
// bash for a command that handled the signal, and the loop went on. For
// both programs: the front, which serves run when a worker does, and
// queuectl-full.
func TestCtrlCEndsAShellLoopOfRun(t *testing.T) {
	h := newHome(t)
	h.startServing()
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		t.Run(prog, func(t *testing.T) {
			g := newGate(t)
			run := h.commandOf(prog, "run", "--id", prog+"-loop", "--shell", g.command())
			script := `for i in 1 2 3; do "$@"; echo "rc=$?"; done; echo loop-done`
			cmd := exec.Command("bash", append([]string{"-c", script, "bash", run.Path}, run.Args[1:]...)...)
			cmd.Env = run.Env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a foreground group of its own
			loop := h.startCmd(cmd)
			g.waitStarted(t)
			if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil { // Ctrl-C
				t.Fatal(err)
			}
			code := loop.exit(t, 30*time.Second)
			if out := loop.stdout.String(); strings.Contains(out, "rc=") || strings.Contains(out, "loop-done") || code != 130 {
				t.Errorf("the loop after one Ctrl-C: exit %d, stdout %q; want it ended with the run (130), nothing more run\nstderr: %s",
					code, out, loop.stderr)
			}
			waitFor(t, 30*time.Second, "the interrupted run's job to be canceled", func() bool {
				return h.show(prog+"-loop").State == "canceled"
			})
		})
	}
}

// TestRunEndsWithItsTerminalAndReader: run stands in for its command, so
// what would end the command ends run and cancels its job: a hangup (run
// then dies of SIGHUP, as the command would have), unless run started
// with SIGHUP ignored (nohup) — nor does SIGINT when it started ignoring
// it (a script's background command) — and the reader of its output going away
// (exit 141, as for a process that SIGPIPE ended). For both programs: the
// front, which serves run when a worker does, and queuectl-full.
func TestRunEndsWithItsTerminalAndReader(t *testing.T) {
	// Started under nohup (as a CI runner may be), this process ignores
	// SIGHUP, and so would every process it starts. Caught here, it is
	// back to its default in them, as in a terminal.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	h := newHome(t)
	// Up to its socket, so that every run here goes through the hand-off
	// (the store path has TestRunFailsWhenItsOutputCannotBeWritten).
	h.startServing()
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		t.Run(prog, func(t *testing.T) {
			g := newGate(t)
			r := h.startCmd(h.commandOf(prog, "run", "--id", prog+"-hup", "--shell", g.command()))
			g.waitStarted(t)
			r.signal(t, syscall.SIGHUP)
			r.exit(t, 30*time.Second)
			if ws := r.cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGHUP {
				t.Errorf("run after SIGHUP: %v, want ended by SIGHUP\nstderr: %s", r.cmd.ProcessState, r.stderr)
			}
			// Canceled by run before it ended; the worker may still be
			// stopping the job's processes.
			waitFor(t, 30*time.Second, "the job of a run that SIGHUP ended to be canceled", func() bool {
				return h.show(prog+"-hup").State == "canceled"
			})

			// Started with the signal ignored, run leaves it alone, as the
			// command would: under nohup, SIGHUP; as a background command
			// of a script, SIGINT (the Ctrl-C is for the script's
			// foreground).
			for _, ignored := range []struct {
				name string
				sig  syscall.Signal
			}{{"nohup", syscall.SIGHUP}, {"bg", syscall.SIGINT}} {
				g = newGate(t)
				cmd := h.commandOf(prog, "run", "--id", prog+"-"+ignored.name, "--shell", g.command())
				if ignored.sig == syscall.SIGHUP {
					nohup, err := exec.LookPath("nohup")
					if err != nil {
						t.Fatal(err)
					}
					cmd.Path, cmd.Args = nohup, append([]string{"nohup"}, cmd.Args...)
				} else {
					ignoring(cmd, "INT")
				}
				r = h.startCmd(cmd)
				g.waitStarted(t)
				r.signal(t, ignored.sig)
				g.release(t)
				if code := r.exit(t, 30*time.Second); code != 0 {
					t.Errorf("run started with %v ignored, after %v: exit %d, want the job's 0\nstderr: %s", ignored.sig, ignored.sig, code, r.stderr)
				}
			}

			cmd := h.commandOf(prog, "run", "--id", prog+"-pipe", "--", "sh", "-c", "while :; do echo x; sleep 0.01; done")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			r = h.startCmd(cmd)
			if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
				t.Fatalf("read run's first line: %v\nstderr: %s", err, r.stderr)
			}
			out.Close()
			if code := r.exit(t, 30*time.Second); code != 141 {
				t.Errorf("run whose reader went away: exit %d, want 141\nstderr: %s", code, r.stderr)
			}
			waitFor(t, 30*time.Second, "the job of a run whose reader went away to be canceled", func() bool {
				return h.show(prog+"-pipe").State == "canceled"
			})
		})
	}
}

// TestRunFailsWhenItsOutputCannotBeWritten: output that cannot be written
// (a full disk: /dev/full) fails run (exit 1, saying why), even when the
// job ended before run wrote its last output: here run follows the job in
// the store, the socket's worker serving another queue.
func TestRunFailsWhenItsOutputCannotBeWritten(t *testing.T) {
	h := newHome(t)
	h.startServing("--queue", "other")
	h.start("worker", "start", "--no-spool", "--queue", "out")
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	run := h.command("run", "-q", "--queue", "out", "--", "echo", "result")
	run.Stdout = full
	var stderr bytes.Buffer
	run.Stderr = &stderr
	err = run.Run()
	if code := run.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "no space left on device") {
		t.Errorf("run with its stdout on /dev/full: exit %d (%v), want 1 saying why\nstderr: %s", code, err, stderr.String())
	}
}

// TestRunAfterItsWorkerIsLost: a run lost with its worker (kill -9) is
// not an attempt: run says so, follows the job to its next run on another
// worker, and names that run as the same attempt, not "attempt 2 of 1".
func TestRunAfterItsWorkerIsLost(t *testing.T) {
	h := newHome(t)
	// run hands the job to it: the front follows it on its connection, and
	// queuectl-full in the store once the connection is gone.
	first := h.startServing()
	g := newGate(t)
	again := filepath.Join(t.TempDir(), "again")
	r := h.start("run", "--id", "lost", "--shell", fmt.Sprintf("if [ -e %s ]; then echo again; exit 0; fi; touch %s; %s", again, again, g.command()))
	g.waitStarted(t)
	first.cmd.Process.Kill()
	first.exit(t, 30*time.Second)
	h.start("worker", "start", "--no-spool")
	if code := r.exit(t, time.Minute); code != 0 {
		t.Fatalf("run exit %d, want 0 (its job's second run)\nstderr: %s", code, r.stderr)
	}
	if strings.Contains(r.stderr.String(), "attempt 1 of 1 started") {
		t.Errorf("run told the start of its job's first run, which started at once:\n%s", r.stderr)
	}
	for _, want := range []string{
		"queuectl: job lost: run 1 was lost with its worker; it runs again as the same attempt\n",
		"queuectl: job lost: attempt 1 (run 2) of 1 started\n",
	} {
		if !strings.Contains(r.stderr.String(), want) {
			t.Errorf("run's stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.HasSuffix(r.stdout.String(), "again\n") {
		t.Errorf("run's stdout %q, want it to end with the second run's line", r.stdout)
	}
}

// TestRunTimeout: an attempt that outlives --timeout ends run with 124.
func TestRunTimeout(t *testing.T) {
	h := newHome(t)
	h.start("worker", "start", "--no-spool")
	g := newGate(t)
	_, stderr, code := h.run("run", "--id", "slow", "--timeout", "1s", "--shell", g.command())
	if code != 124 {
		t.Fatalf("run --timeout 1s of a job that waits for ever: exit %d, want 124\nstderr: %s", code, stderr)
	}
	if !strings.Contains(stderr, "queuectl: error: job slow: ") {
		t.Errorf("run does not say the job timed out:\n%s", stderr)
	}
	// Its worker timed it out, which the job keeps: not canceled with no
	// word of why.
	if j := h.show("slow"); j.State != "dead" || !strings.Contains(j.LastError, "timed out after 1s") {
		t.Errorf("the job of run --timeout 1s after its attempt ran out: %s, last_error %q; want dead, timed out after 1s", j.State, j.LastError)
	}
	// A dead job is not canceled: nothing is left to cancel, and the
	// worker's connection, closed at the job's end, would refuse it.
	if strings.Contains(stderr, "cancel") {
		t.Errorf("run tried to cancel a dead job:\n%s", stderr)
	}

	// With attempts left, run cancels the job, and says so rather than
	// a next attempt that never comes; in both programs.
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		g := newGate(t)
		id := "retried-" + prog
		r := h.startCmd(h.commandOf(prog, "run", "--id", id, "--timeout", "1s", "--max-retries", "2", "--shell", g.command()))
		if code := r.exit(t, time.Minute); code != 124 {
			t.Fatalf("%s run --timeout 1s --max-retries 2: exit %d, want 124\nstderr: %s", prog, code, r.stderr)
		}
		text := r.stderr.String()
		if strings.Contains(text, "next attempt") || !strings.Contains(text, "run cancels the job") {
			t.Errorf("%s run --timeout 1s --max-retries 2 said:\n%s\nwant that run cancels the job, and no next attempt", prog, text)
		}
		if j := h.show(id); j.State != "canceled" {
			t.Errorf("%s run's job after its attempt ran out with attempts left: %s, want canceled", prog, j.State)
		}
	}
}

// TestRunCancelsItsJob: Ctrl-C, and an attempt that outlives --timeout,
// cancel run's job; a cancel from elsewhere ends run with 1.
func TestRunCancelsItsJob(t *testing.T) {
	h := newHome(t)
	h.start("worker", "start", "--no-spool")

	g := newGate(t)
	r := h.start("run", "--id", "interrupted", "--shell", g.command())
	g.waitStarted(t)
	r.signal(t, syscall.SIGINT)
	if code := r.exit(t, 30*time.Second); code != 130 {
		t.Fatalf("run exit %d after SIGINT, want 130\nstderr: %s", code, r.stderr)
	}
	if j := h.show("interrupted"); j.State != "canceled" {
		t.Errorf("job after Ctrl-C of its run: %s, want canceled", j.State)
	}

	// Ctrl-\ ends run the same way, in both programs, exiting as a shell
	// reports a process SIGQUIT ended, without the runtime's goroutine dump.
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		g := newGate(t)
		id := "quit-" + prog
		r := h.startCmd(h.commandOf(prog, "run", "--id", id, "--shell", g.command()))
		g.waitStarted(t)
		r.signal(t, syscall.SIGQUIT)
		if code := r.exit(t, 30*time.Second); code != 131 || strings.Contains(r.stderr.String(), "goroutine") {
			t.Fatalf("%s run: exit %d after SIGQUIT, want 131 and no dump\nstderr: %s", prog, code, r.stderr)
		}
		if j := h.show(id); j.State != "canceled" {
			t.Errorf("job after Ctrl-\\ of its %s run: %s, want canceled", prog, j.State)
		}
	}

	// Two attempts, so that the job is not finished when its first one
	// times out: run cancels it. (With one, the worker's own timeout may
	// end it dead first, which is as good an end.)
	g = newGate(t)
	if _, stderr, code := h.run("run", "--id", "slow", "--max-retries", "2", "--timeout", "1s", "--shell", g.command()); code != 124 {
		t.Fatalf("run --timeout 1s: exit %d, want 124\nstderr: %s", code, stderr)
	}
	waitFor(t, 30*time.Second, "the timed-out job to be canceled", func() bool { return h.show("slow").State == "canceled" })

	g = newGate(t)
	r = h.start("run", "--id", "elsewhere", "--shell", g.command())
	g.waitStarted(t)
	h.must("cancel", "elsewhere")
	if code := r.exit(t, 30*time.Second); code != 1 {
		t.Fatalf("run exit %d after its job was canceled elsewhere, want 1\nstderr: %s", code, r.stderr)
	}
	if !strings.Contains(r.stderr.String(), "queuectl: error: job elsewhere was canceled") {
		t.Errorf("run does not say its job was canceled:\n%s", r.stderr)
	}
}

// TestRunMakesOneAttempt: run stands in for running the command, so it
// makes one attempt whatever config max-retries says (3 by default);
// --max-retries, or its alias --retries, asks for more.
func TestRunMakesOneAttempt(t *testing.T) {
	h := newHome(t)
	h.start("worker", "start", "--no-spool")
	out, stderr, code := h.run("run", "--id", "once", "--", "sh", "-c", "echo x; exit 3")
	if code != 3 || out != "x\n" {
		t.Errorf("run -- sh -c 'echo x; exit 3': exit %d, stdout %q; want 3 and one x\nstderr: %s", code, out, stderr)
	}
	if j := h.show("once"); j.State != "dead" || j.Attempts != 1 {
		t.Errorf("job after run: %s after %d attempts, want dead after 1", j.State, j.Attempts)
	}
	out, stderr, code = h.run("run", "--id", "twice", "--retries", "2", "--backoff-base", "1", "--", "sh", "-c", "echo x; exit 3")
	if code != 3 || out != "x\nx\n" {
		t.Errorf("run --retries 2: exit %d, stdout %q; want 3 and two x\nstderr: %s", code, out, stderr)
	}
	if j := h.show("twice"); j.Attempts != 2 {
		t.Errorf("job after run --retries 2: %d attempts, want 2", j.Attempts)
	}
}

// TestRunLeavesItsStdinToItsCaller: run never reads its stdin (a job's is
// /dev/null), so a shell loop over lines that calls run for each, through
// the front program or the full one, gets every line.
func TestRunLeavesItsStdinToItsCaller(t *testing.T) {
	h := newHome(t)
	h.startServing()
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		cmd := h.command()
		cmd.Args = []string{needTool(t, "bash"), "-c", `while read -r w; do ` + prog + ` run -q -- echo "got $w" || exit; done`}
		cmd.Path = cmd.Args[0]
		cmd.Stdin = strings.NewReader("a\nb\nc\n")
		out, err := cmd.Output()
		if want := "got a\ngot b\ngot c\n"; err != nil || string(out) != want {
			t.Errorf("a while-read loop of %s run over 3 lines: %v, stdout %q; want %q", prog, err, out, want)
		}
	}
}

// TestRelativeHomeReachesTheJobsWhole: a home named by a relative path
// reaches the worker's jobs as an absolute one, so that a queuectl in a
// job, run in a directory of its own, enqueues into the same queue.
func TestRelativeHomeReachesTheJobsWhole(t *testing.T) {
	h := newHome(t)
	relative := func(args ...string) *exec.Cmd {
		cmd := h.command(args...)
		cmd.Dir = filepath.Dir(h.dir)
		cmd.Env = append(cmd.Env, "QUEUECTL_HOME="+filepath.Base(h.dir))
		return cmd
	}
	h.startCmd(relative("worker", "start", "--no-spool"))
	waitFor(t, 30*time.Second, "the worker's socket", func() bool {
		_, err := os.Stat(filepath.Join(h.dir, "enqueue.sock"))
		return err == nil
	})
	out, err := relative("run", "-q", "--cwd", t.TempDir(), "--", "sh", "-c",
		`echo "$QUEUECTL_HOME"; queuectl enqueue -q --id inner --command true`).CombinedOutput()
	if want := h.dir + "\ninner\n"; err != nil || string(out) != want {
		t.Fatalf("run of a job enqueueing another, the home relative: %v, output %q; want %q", err, out, want)
	}
	if _, errText, code := h.run("wait", "inner", "--timeout", "60s"); code != 0 {
		t.Errorf("wait for the job's own job in the home: exit %d\n%s", code, errText)
	}
}

// TestRunCommandKeepsItsFlags: without --, the command's first word ends
// run's flags: `run -q printf ... -q --label` runs printf with both, as
// env and nohup would, instead of taking them for run's.
func TestRunCommandKeepsItsFlags(t *testing.T) {
	h := newHome(t)
	h.start("worker", "start", "--no-spool")
	out, stderr, code := h.run("run", "-q", "printf", "%s|%s", "-q", "--label")
	if code != 0 || out != "-q|--label" {
		t.Fatalf("run -q printf '%%s|%%s' -q --label: exit %d, stdout %q; want 0 and \"-q|--label\"\nstderr: %s", code, out, stderr)
	}
}

// TestRunNoticeStartsItsOwnLine: a notice of run's after a line the job
// left open on stderr ("progress 50%") starts a line of its own; with
// nothing of run's after it, the job's stderr is left as it wrote it.
func TestRunNoticeStartsItsOwnLine(t *testing.T) {
	h := newHome(t)
	h.start("worker", "start", "--no-spool")
	_, stderr, code := h.run("run", "--", "sh", "-c", `printf 'progress 50%%' >&2; exit 1`)
	if code != 1 || !strings.Contains(stderr, "progress 50%\nqueuectl: job ") {
		t.Errorf("run of a job leaving its stderr line open: exit %d, stderr:\n%s", code, stderr)
	}
	if _, stderr, code := h.run("run", "-q", "--", "sh", "-c", `printf 'no newline' >&2`); code != 0 || stderr != "no newline" {
		t.Errorf("run -q of a job leaving its stderr line open: exit %d, stderr %q, want it as written", code, stderr)
	}
	// Where stdout and stderr are one (a terminal, 2>&1), a line left
	// open on stdout is the one a notice would go on; elsewhere it is not.
	both := &bytes.Buffer{}
	cmd := h.commandOf("queuectl-full", "run", "--", "sh", "-c", `printf 'compiling... '; exit 1`)
	cmd.Stdout, cmd.Stderr = both, both
	if cmd.Run(); !strings.Contains(both.String(), "compiling... \nqueuectl: job ") || strings.Contains(both.String(), "\n\n") {
		t.Errorf("run 2>&1 of a job leaving its stdout line open: output:\n%s", both)
	}
	if _, stderr, code := h.run("run", "--", "sh", "-c", `printf 'compiling... '; exit 1`); code != 1 || strings.Contains(stderr, "\n\n") {
		t.Errorf("run of a job leaving its stdout line open, stderr apart: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestRunResumedWithAnOpenLine: the full program, resuming a run the front
// began with the job's stderr line left open, ends that line before its
// first notice, even one it writes before following the job (a paused
// queue's).
func TestRunResumedWithAnOpenLine(t *testing.T) {
	h := newHome(t)
	h.must("pause", "--queue", "pq")
	h.startServing()
	cmd := h.commandOf("queuectl-full", "run", "--queue", "pq", "--", "echo", "hi")
	resume := fmt.Sprintf(`{"ID":"resumed","Start":%q,"Open":true}`, time.Now().Format(time.RFC3339Nano))
	cmd.Env = append(cmd.Env, "QUEUECTL_FRONT_RESUME="+resume)
	r := h.startCmd(cmd)
	waitFor(t, 30*time.Second, "run to say the queue is paused", func() bool {
		return strings.Contains(r.stderr.String(), "waits: queue pq is paused")
	})
	h.must("resume", "--queue", "pq")
	if code := r.exit(t, time.Minute); code != 0 || r.stdout.String() != "hi\n" {
		t.Fatalf("resumed run: exit %d, stdout %q\nstderr: %s", code, r.stdout, r.stderr)
	}
	if !strings.HasPrefix(r.stderr.String(), "\nqueuectl: job resumed: waits: queue pq is paused\n") {
		t.Errorf("resumed run's stderr does not end the open line first:\n%q", r.stderr)
	}
}

// TestRunNamesItsJobsLabel: with --label, every notice run writes about
// its job names the label beside the id (which target of make -j a line
// is about), when run follows the job in the store as when its worker
// follows it for run (front/pair_test.go).
func TestRunNamesItsJobsLabel(t *testing.T) {
	h := newHome(t)
	// The worker serving the socket serves queue other only: run follows
	// its job of queue work, run by the second worker, in the store.
	h.startServing("--queue", "other")
	h.start("worker", "start", "--no-spool", "--queue", "work")
	// Registered first: a run that finds no worker of its queue says so,
	// and then tells its job's start.
	waitFor(t, 30*time.Second, "both workers to register", func() bool { return len(workersOf(t, h)) == 2 })
	_, stderr, code := h.run("run", "--queue", "work", "--label", "cc foo.o", "--", "sh", "-c", "echo no >&2; exit 4")
	notices := regexp.MustCompile(`(?m)^queuectl: job .*$`).FindAllString(stderr, -1)
	if code != 4 || len(notices) != 2 {
		t.Fatalf("run --label of a failing command: exit %d, %d notices, want 4 and 2 (its failure, its death)\nstderr:\n%s", code, len(notices), stderr)
	}
	for _, n := range notices {
		if !regexp.MustCompile(`^queuectl: job \S+ \(cc foo\.o\)`).MatchString(n) {
			t.Errorf("notice %q does not name the job's label", n)
		}
	}
	// So does the warning that no worker serves its queue, said before
	// the job has an id.
	r := h.start("run", "--queue", "nobody", "--label", "cc bar.o", "--", "true")
	waitFor(t, 30*time.Second, "run to warn that no worker serves queue nobody", func() bool {
		return strings.Contains(r.stderr.String(), "queuectl: warning: no live worker serves queue nobody; the job (cc bar.o) waits until one does\n")
	})
}

// TestRunSaysItWaitsForALimitedQueue: while queue heavy runs its 2 jobs of
// 2, run says once that its job waits for the queue, and then when it
// starts.
// It does so whether the worker serving the home's socket follows the job
// for it, or, serving other queues only, leaves run to follow the job in
// the store.
func TestRunSaysItWaitsForALimitedQueue(t *testing.T) {
	t.Run("socket", func(t *testing.T) {
		h := newHome(t)
		h.start("worker", "start", "--count", "4", "--no-spool")
		waitsForALimitedQueue(t, h)
	})
	t.Run("store", func(t *testing.T) {
		h := newHome(t)
		h.startServing("--queue", "other")
		h.start("worker", "start", "--count", "4", "--queue", "heavy", "--no-spool")
		waitsForALimitedQueue(t, h)
	})
}

func waitsForALimitedQueue(t *testing.T, h *qhome) {
	h.must("queue", "set", "heavy", "--max-running", "2")
	g1, g2 := newGate(t), newGate(t)
	h.must("enqueue", "--queue", "heavy", "--command", g1.command())
	h.must("enqueue", "--queue", "heavy", "--command", g2.command())
	g1.waitStarted(t)
	g2.waitStarted(t)
	r := h.start("run", "--id", "third", "--queue", "heavy", "--", "echo", "ran")
	waiting := "queuectl: job third: waits for queue heavy (2/2 running)\n"
	waitFor(t, 30*time.Second, "run to say it waits for the queue", func() bool {
		return strings.Contains(r.stderr.String(), waiting)
	})
	g1.release(t)
	if code := r.exit(t, 30*time.Second); code != 0 || r.stdout.String() != "ran\n" {
		t.Fatalf("run: exit %d, stdout %q; want 0 and ran\nstderr: %s", code, r.stdout, r.stderr)
	}
	g2.release(t)
	saidOnceThenStarted(t, r.stderr.String(), waiting, "third")
}

// saidOnceThenStarted checks that run's stderr says waiting once, and its
// job id's start after it.
func saidOnceThenStarted(t *testing.T, stderr, waiting, id string) {
	t.Helper()
	if n := strings.Count(stderr, waiting); n != 1 {
		t.Errorf("run said %d times that it waits, want once:\n%s", n, stderr)
	}
	if _, after, _ := strings.Cut(stderr, waiting); !strings.Contains(after, "queuectl: job "+id+": attempt 1 of 1 started\n") {
		t.Errorf("run does not say when its job starts, after it waited:\n%s", stderr)
	}
}

// TestRunSaysItWaitsForAFreeSlot: a run whose job waits on while every
// slot of the workers serving its queue is busy (a recursive make whose
// outer steps hold them all) says so once, followed by its worker or in
// the store, and goes on when a slot frees.
func TestRunSaysItWaitsForAFreeSlot(t *testing.T) {
	runPaths(t, func(t *testing.T, h *qhome) {
		gates := make([]gate, 4) // the slots of the worker of queue work
		for i := range gates {
			gates[i] = newGate(t)
			h.must("enqueue", "--queue", "work", "--command", gates[i].command())
		}
		for _, g := range gates {
			g.waitStarted(t)
		}
		r := h.start("run", "--id", "fifth", "--queue", "work", "--", "echo", "ran")
		waiting := "queuectl: warning: job fifth waits for a free slot: every slot of the workers serving queue work is busy (4/4)\n"
		waitFor(t, 30*time.Second, "run to say it waits for a free slot", func() bool {
			return strings.Contains(r.stderr.String(), waiting)
		})
		gates[0].release(t)
		if code := r.exit(t, 30*time.Second); code != 0 || r.stdout.String() != "ran\n" {
			t.Fatalf("run: exit %d, stdout %q; want 0 and ran\nstderr: %s", code, r.stdout, r.stderr)
		}
		for _, g := range gates[1:] {
			g.release(t)
		}
		saidOnceThenStarted(t, r.stderr.String(), waiting, "fifth")
	})
}

// TestRunSaysItWaitsForAPausedQueue: a run whose queue is paused says so
// once, by both programs, and goes on when the queue is resumed.
func TestRunSaysItWaitsForAPausedQueue(t *testing.T) {
	h := newHome(t)
	h.startServing()
	h.must("pause", "--queue", "mail")
	var runs []*proc
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		runs = append(runs, h.startCmd(h.commandOf(prog, "run", "--queue", "mail", "--id", prog, "--", "true")))
	}
	for _, r := range runs {
		waitFor(t, 30*time.Second, fmt.Sprintf("%v to say the queue is paused", r.cmd.Args[1:]), func() bool {
			return strings.Contains(r.stderr.String(), "waits: queue mail is paused\n")
		})
	}
	h.must("resume", "--queue", "mail")
	for _, r := range runs {
		if code := r.exit(t, 30*time.Second); code != 0 || strings.Count(r.stderr.String(), "is paused") != 1 {
			t.Errorf("%v: exit %d, want 0 and one notice\nstderr: %s", r.cmd.Args[1:], code, r.stderr)
		}
	}
}

// TestRunGoesOnWhenItsWorkerStops: run follows its job on the connection
// of the worker that serves the home's socket; when that worker stops (a
// hard stop, which puts the running job back), run follows the job in the
// store, writes nothing twice, and ends with the job once another worker
// ran it.
func TestRunGoesOnWhenItsWorkerStops(t *testing.T) {
	h := newHome(t)
	w := h.startServing()
	g := newGate(t)
	r := h.start("run", "--id", "moved", "--shell", g.command()+"; exit 5")
	g.waitStarted(t)
	waitFor(t, 30*time.Second, "run to print the job's first line", func() bool { return r.stdout.String() == "one\n" })
	w.signal(t, syscall.SIGTERM)
	waitFor(t, 30*time.Second, "the worker to stop softly", func() bool {
		return strings.Contains(w.stderr.String(), "running job(s) finish")
	})
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, 30*time.Second); code != 130 {
		t.Fatalf("worker exit %d after two signals, want 130\nstderr: %s", code, w.stderr)
	}
	if err := os.Remove(g.started); err != nil {
		t.Fatal(err)
	}
	h.start("worker", "start", "--no-spool")
	g.waitStarted(t)
	g.release(t)
	if code := r.exit(t, 30*time.Second); code != 5 {
		t.Fatalf("run exit %d, want the job's 5\nstderr: %s", code, r.stderr)
	}
	if got, want := r.stdout.String(), "one\none\ntwo\n"; got != want {
		t.Errorf("run stdout %q, want %q: the first run's line once, then the second run's", got, want)
	}
	if n := strings.Count(r.stderr.String(), "attempt 1 of 1 started"); n != 0 {
		t.Errorf("run announced the first run's start %d times, want never (it started at once):\n%s", n, r.stderr)
	}
	if n := strings.Count(r.stderr.String(), "attempt 1 (run 2) of 1 started"); n != 1 {
		t.Errorf("run announced the second run's start %d times, want once:\n%s", n, r.stderr)
	}
}

// TestHotPathOpensNoStore: to a home whose worker serves the socket (its
// queue, too), enqueue and run hand the job over and open no store of
// their own: no SQLite connection, no fsync, no query of the client's.
func TestHotPathOpensNoStore(t *testing.T) {
	h := newHome(t)
	h.startServing()
	for _, args := range [][]string{
		{"enqueue", "-q", "--command", "echo hot"},
		{"run", "-q", "--", "echo", "hot"},
	} {
		before := storesOpened.Load()
		var stdout, stderr bytes.Buffer
		code := Main(t.Context(), append([]string{"queuectl", "--home", h.dir}, args...), nil, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("queuectl %v: exit %d\nstderr: %s", args, code, &stderr)
		}
		if n := storesOpened.Load() - before; n != 0 {
			t.Errorf("queuectl %v opened %d store(s), want none: the worker stores the job", args, n)
		}
	}
}

// TestRunQuietOfWorkersOnceItsJobEnded: a run whose worker stops (worker
// stop) while its job runs, and whose end the full program takes over
// only once that worker is gone, does not warn that no live worker serves
// the job's queue: the job ended, and waits for none.
func TestRunQuietOfWorkersOnceItsJobEnded(t *testing.T) {
	h := newHome(t)
	w := h.startServing("--count", "2")
	// The front program, beside a queuectl-full that starts only once
	// fullGate opens: what the front leaves to it, it takes over after the
	// worker has exited.
	dir := t.TempDir()
	front, full := filepath.Join(dir, "queuectl"), filepath.Join(dir, "queuectl-full")
	bin, err := exec.LookPath("queuectl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(bin, front); err != nil {
		data, err := os.ReadFile(bin)
		if err == nil {
			err = os.WriteFile(front, data, 0o700)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	realFull, err := exec.LookPath("queuectl-full")
	if err != nil {
		t.Fatal(err)
	}
	fullGate := filepath.Join(dir, "open")
	script := fmt.Sprintf("#!/bin/sh\nwhile [ ! -e %s ]; do sleep 0.02; done\nexec %s \"$@\"\n", fullGate, realFull)
	if err := os.WriteFile(full, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}

	g := newGate(t)
	cmd := h.command("run", "--label", "ended", "--shell", g.command()+"; exit 4")
	cmd.Path, cmd.Args[0] = front, front
	r := h.startCmd(cmd)
	waitReport(t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(g.started)
		return err == nil
	}, func() string {
		return fmt.Sprintf("ended %v (%v), stdout %q, stderr %q", ended(r), r.err, r.stdout, r.stderr)
	})
	h.must("worker", "stop")
	waitFor(t, 30*time.Second, "the worker to stop softly", func() bool {
		return strings.Contains(w.stderr.String(), "running job(s) finish")
	})
	g.release(t)
	if code := w.exit(t, 30*time.Second); code != 0 {
		t.Fatalf("worker exit %d, want 0\nstderr: %s", code, w.stderr)
	}
	if err := os.WriteFile(fullGate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := r.exit(t, 30*time.Second); code != 4 {
		t.Fatalf("run exit %d, want the job's 4\nstderr: %s", code, r.stderr)
	}
	stderr := r.stderr.String()
	if strings.Contains(stderr, "no live worker") || !regexp.MustCompile(`queuectl: job \S+ \(ended\) is dead: run 1 exited 4\n`).MatchString(stderr) {
		t.Errorf("run of a job that ended, taken over once its worker was gone, warned of workers or did not say why it died:\n%s", stderr)
	}
}

// TestRunKeepsTheOrderOfStdoutAndStderr: a job that writes to stdout and
// stderr in turn, each line only once the one before is in its log, shows
// them in that order on a run whose stdout and stderr are one file, as the
// job run directly would; the last two, written at its end, too. (Its
// worker serves the run: a run followed in the store reads two files.)
func TestRunKeepsTheOrderOfStdoutAndStderr(t *testing.T) {
	h := newHome(t)
	h.startServing()
	script := `log="$QUEUECTL_HOME/logs/$QUEUECTL_JOB_ID/$QUEUECTL_ATTEMPT"
logged() { until grep -qx "$2" "$log.$1" 2>/dev/null; do sleep 0.01; done; }
for i in 1 2 3 4 5; do
	echo out$i; logged out out$i
	echo err$i >&2; logged err err$i
done
echo err-last >&2; logged err err-last; echo out-last`
	out, err := os.Create(filepath.Join(t.TempDir(), "both"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := h.commandOf("queuectl", "run", "-q", "--shell", script)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v", err)
	}
	got, _ := os.ReadFile(out.Name())
	want := "out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\nerr5\nerr-last\nout-last\n"
	if string(got) != want {
		t.Errorf("run's stdout and stderr together:\n%s\nwant:\n%s", got, want)
	}
}

// underUmask makes cmd start under umask mask: a shell sets it and execs
// the command, so that this process's own umask, which every goroutine of
// the test binary shares, never changes.
func underUmask(cmd *exec.Cmd, mask string) *exec.Cmd {
	cmd.Args = append([]string{"/bin/sh", "-c", "umask " + mask + `; exec "$@"`, "sh", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	return cmd
}

// TestRunCarriesItsCallersUmask: run stands in for running its command in
// the caller's shell, so the files the command creates get the caller's
// umask, stricter or looser than the worker's, through the front program
// and the full one; show says which. A job of enqueue carries nothing of
// its caller's shell and keeps the worker's umask.
func TestRunCarriesItsCallersUmask(t *testing.T) {
	h := newHome(t)
	h.startCmd(underUmask(h.command("worker", "start", "--no-spool"), "022"))
	waitFor(t, 30*time.Second, "the worker's socket", func() bool {
		_, err := os.Stat(filepath.Join(h.dir, "enqueue.sock"))
		return err == nil
	})
	dir := t.TempDir()
	mode := func(name string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	umaskOf := func(id string) string {
		t.Helper()
		var j struct{ Umask *string }
		if err := json.Unmarshal([]byte(h.must("show", "--json", id)), &j); err != nil {
			t.Fatal(err)
		}
		if j.Umask == nil {
			return "none"
		}
		return *j.Umask
	}
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		for _, c := range []struct {
			mask string
			want os.FileMode
		}{{"077", 0o600}, {"002", 0o664}} {
			id := prog + "-" + c.mask
			cmd := underUmask(h.commandOf(prog, "run", "-q", "--id", id, "--", "touch", id), c.mask)
			cmd.Dir = dir
			p := h.startCmd(cmd)
			if code := p.exit(t, runLimit); code != 0 {
				t.Fatalf("%s run -- touch under umask %s: exit %d\nstderr: %s", prog, c.mask, code, p.stderr)
			}
			if got := mode(id); got != c.want {
				t.Errorf("%s run -- touch under umask %s made a file of mode %#o, want %#o (the worker's umask is 022)",
					prog, c.mask, got, c.want)
			}
			if got, want := umaskOf(id), "0"+c.mask; got != want {
				t.Errorf("show --json %s: umask %s, want %s", id, got, want)
			}
		}
		id := prog + "-enqueued"
		cmd := underUmask(h.commandOf(prog, "enqueue", "-q", "--id", id, "--cwd", dir, "--command", "touch "+id), "077")
		if p := h.startCmd(cmd); p.exit(t, runLimit) != 0 {
			t.Fatalf("%s enqueue under umask 077: stderr: %s", prog, p.stderr)
		}
		if _, errText, code := h.run("wait", id, "--timeout", "60s"); code != 0 {
			t.Fatalf("wait %s: exit %d\n%s", id, code, errText)
		}
		if got := mode(id); got != 0o644 {
			t.Errorf("%s enqueue under umask 077: the job made a file of mode %#o, want %#o (the worker's umask, 022)", prog, got, 0o644)
		}
		if got := umaskOf(id); got != "none" {
			t.Errorf("show --json %s: umask %s, want none", id, got)
		}
	}
}

// TestRunTimeoutOfAJobThatTrapsTerm: the last attempt of run's job traps
// SIGTERM and outlives --timeout by front.TimeoutGrace, before its
// worker's KILL at the end of its stop-timeout. run exits 124 and says the
// job goes on until then, without canceling it: the worker's timeout ends
// it dead, "timed out after 1s", where a cancel would have killed it no
// sooner and left it canceled with no word of why. In both programs.
func TestRunTimeoutOfAJobThatTrapsTerm(t *testing.T) {
	t.Parallel() // it mostly waits for a stop-timeout: see TestMain
	h := newHome(t)
	h.must("config", "set", "stop-timeout", "12s")
	h.start("worker", "start", "--count", "2", "--no-spool")
	runs := map[string]*proc{}
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		runs[prog] = h.startCmd(h.commandOf(prog, "run", "--id", "trap-"+prog, "--timeout", "1s", "--shell", `trap "" TERM; sleep 60`))
	}
	for prog, r := range runs {
		if code := r.exit(t, time.Minute); code != 124 {
			t.Fatalf("%s run --timeout 1s of a job that traps TERM: exit %d, want 124\nstderr: %s", prog, code, r.stderr)
		}
		text := r.stderr.String()
		if !strings.Contains(text, "goes on after SIGTERM") || strings.Contains(text, "cancel") {
			t.Errorf("%s run said:\n%s\nwant that the job goes on after SIGTERM, and no cancel", prog, text)
		}
	}
	for prog := range runs {
		id := "trap-" + prog
		if _, stderr, code := h.run("wait", id, "--timeout", "60s"); code != 1 {
			t.Fatalf("wait %s: exit %d, want 1 (dead)\nstderr: %s", id, code, stderr)
		}
		if j := h.show(id); j.State != "dead" || !strings.Contains(j.LastError, "timed out after 1s") {
			t.Errorf("%s run's job: %s, last_error %q; want dead, timed out after 1s", prog, j.State, j.LastError)
		}
	}
}

// TestRunSaysWhenItsWorkerDiesAndNoneServes: a run whose worker is killed
// (kill -9) while its job runs, with no other worker serving the job's
// queue, says so, under -q too, instead of waiting without a word for a
// worker to take the job back; once one starts, the job runs again and
// run ends with it.
func TestRunSaysWhenItsWorkerDiesAndNoneServes(t *testing.T) {
	h := newHome(t)
	w := h.startServing("--count", "1")
	g := newGate(t)
	r := h.start("run", "-q", "--id", "gated", "--shell", g.command())
	g.waitStarted(t)
	w.signal(t, syscall.SIGKILL)
	<-w.done
	const warning = "queuectl: warning: the worker running job %s is gone, and no live worker serves queue default; it runs again once one does\n"
	waitReport(t, 30*time.Second, "run to warn that no live worker serves queue default", func() bool {
		return strings.Contains(r.stderr.String(), "no live worker serves queue default")
	}, func() string { return fmt.Sprintf("stderr %q", r.stderr) })
	if want := fmt.Sprintf(warning, "gated"); !strings.Contains(r.stderr.String(), want) {
		t.Errorf("run's stderr:\n%s\nwant %q", r.stderr, want)
	}
	h.startServing()
	g.release(t)
	if code := r.exit(t, time.Minute); code != 0 || r.stdout.String() != "one\none\ntwo\n" {
		t.Fatalf("run: exit %d, stdout %q, want 0 and the second run's output after the first's\nstderr: %s", code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr.String(), "no live worker serves"); n != 1 {
		t.Errorf("run warned %d times, want once:\n%s", n, r.stderr)
	}
}

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// onHost runs queuectl from home h as if on another host: in a UTS
// namespace of its own, named host (so run.HostID differs from this
// process's), sharing h's PostgreSQL store.
func onHost(t *testing.T, h *qhome, host string, args ...string) *exec.Cmd {
	t.Helper()
	unshare := unshareUTS(t)
	cmd := h.command(args...)
	cmd.Args = append([]string{unshare, "--uts", "sh", "-c", `hostname "$1" && shift && exec "$@"`, "sh", host, cmd.Path}, args...)
	cmd.Path = unshare
	return cmd
}

// TestLogsFromAnotherHost: a job runs on one host; logs and show on another
// (same PostgreSQL store, a home of its own) print the last 64 KiB of its
// output kept with the run, and name the full file as host:path; on the
// run's own host, logs prints the whole file. logs -f from the other host
// waits for the run's end and then prints what was kept.
func TestLogsFromAnotherHost(t *testing.T) {
	here := newPostgresHome(t)
	there := &qhome{t: t, dir: filepath.Join(t.TempDir(), "home"), db: here.db}
	host := fmt.Sprintf("qtail-%d", os.Getpid())
	onThere := func(args ...string) (string, string) {
		t.Helper()
		var out, errb strings.Builder
		cmd := onHost(t, there, host, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("on %s: queuectl %s: %v\nstderr: %s", host, strings.Join(args, " "), err, errb.String())
		}
		return out.String(), errb.String()
	}

	// seq 1 40000 prints 228894 bytes: 223.5 KiB.
	here.must("enqueue", "--id", "big", "--command", "seq 1 40000; echo warn >&2")
	onThere("worker", "start", "--drain", "--no-spool")
	full := filepath.Join(there.dir, "logs", "big", "1.out")
	if fi, err := os.Stat(full); err != nil || fi.Size() != 228894 {
		t.Fatalf("the run's stdout on its host: %v (%v); want 228894 bytes", fi, err)
	}

	out, errText, code := here.run("logs", "big")
	if code != 0 || !strings.HasSuffix(out, "\n39999\n40000\n") || len(out) != 64<<10 || strings.HasPrefix(out, "1\n") {
		t.Errorf("logs big on another host: exit %d, %d bytes ending %q; want the last 65536 bytes of the output",
			code, len(out), out[max(0, len(out)-14):])
	}
	wantNote := fmt.Sprintf("queuectl: run 1 of job big ran on %s: printed the last 64 KiB of 223.5 KiB of its stdout, kept with the run; the full log is %s:%s\n", host, host, full)
	if errText != wantNote {
		t.Errorf("logs big on another host: stderr\n%q\nwant\n%q", errText, wantNote)
	}
	if out, errText, _ := here.run("logs", "big", "--stderr"); out != "warn\n" || !strings.Contains(errText, "printed all 5 bytes of its stderr") {
		t.Errorf("logs big --stderr on another host = %q, stderr %q; want warn, said to be all of it", out, errText)
	}

	if out := here.must("logs", "big", "--all"); !strings.Contains(out,
		fmt.Sprintf(" · kept: the last 64 KiB of 223.5 KiB of %s:%s ==\n", host, full)) {
		t.Errorf("logs big --all on another host: header %q does not say what was kept", out[:min(len(out), 200)])
	}

	show := here.must("show", "big")
	for _, want := range []string{
		host + ":" + full,
		fmt.Sprintf("stdout of run 1, the last 64 KiB of 223.5 KiB kept with the run (the full log: %s:%s):\n", host, full),
		"\n39999\n40000\n",
		"stderr of run 1, all 5 bytes kept with the run",
	} {
		if !strings.Contains(show, want) {
			t.Errorf("show big on another host does not contain %q:\n%.1500s", want, show)
		}
	}
	js := here.must("show", "--json", "big")
	for _, want := range []string{`"stdout_size": 228894,`, `"stdout_truncated": true,`, `"stdout_file": "` + host + ":" + full + `"`, `40000\n",`} {
		if !strings.Contains(js, want) {
			t.Errorf("show --json big on another host does not contain %q", want)
		}
	}

	// On the run's own host, the file itself, whole, and nothing said.
	if out, errText := onThere("logs", "big"); len(out) != 228894 || !strings.HasPrefix(out, "1\n2\n") || errText != "" {
		t.Errorf("logs big on the run's host: %d bytes starting %q, stderr %q; want the whole file, nothing said", len(out), out[:min(len(out), 8)], errText)
	}

	// logs -f from here, before the run starts there: it waits for the
	// run's end, then prints what was kept.
	gate := filepath.Join(t.TempDir(), "go")
	here.must("enqueue", "--id", "slow", "--env", "GO="+gate, "--command", `while [ ! -e "$GO" ]; do sleep 0.05; done; echo finished`)
	follow := here.start("logs", "-f", "slow")
	worker := onHost(t, there, host, "worker", "start", "--drain", "--no-spool")
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { worker.Process.Kill(); worker.Wait() })
	waitFor(t, time.Minute, "logs -f to wait for the run on the other host", func() bool {
		return strings.Contains(follow.stderr.String(), "waiting for its end")
	})
	if follow.stdout.String() != "" {
		t.Errorf("logs -f printed %q before the run ended", follow.stdout.String())
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := follow.exit(t, time.Minute); code != 0 {
		t.Errorf("logs -f slow exited %d, want 0\nstderr: %s", code, follow.stderr)
	}
	if got := follow.stdout.String(); got != "finished\n" {
		t.Errorf("logs -f slow printed %q, want %q", got, "finished\n")
	}
	for _, want := range []string{
		fmt.Sprintf("queuectl: run 1 of job slow runs on %s (its stdout is in %s:%s): waiting for its end", host, host, filepath.Join(there.dir, "logs", "slow", "1.out")),
		fmt.Sprintf("queuectl: run 1 of job slow ran on %s: printed all 9 bytes of its stdout, kept with the run", host),
	} {
		if !strings.Contains(follow.stderr.String(), want) {
			t.Errorf("logs -f slow: stderr does not contain %q:\n%s", want, follow.stderr)
		}
	}
	if err := worker.Wait(); err != nil {
		t.Errorf("worker on %s: %v", host, err)
	}

	// queuectl run here, its job run there: the output kept with the run
	// is written here when it ends, and the exit code is the job's.
	fg := here.start("run", "--max-retries", "1", "--shell", "echo from-there; echo oops >&2; exit 4")
	worker = onHost(t, there, host, "worker", "start", "--drain", "--no-spool")
	waitFor(t, time.Minute, "queuectl run to enqueue its job", func() bool {
		out, _, _ := here.run("list", "--state", "pending")
		return strings.Contains(out, "from-there")
	})
	if err := worker.Run(); err != nil {
		t.Errorf("worker on %s: %v", host, err)
	}
	if code := fg.exit(t, time.Minute); code != 4 {
		t.Errorf("queuectl run of a job run on another host exited %d, want 4\nstderr: %s", code, fg.stderr)
	}
	if got := fg.stdout.String(); got != "from-there\n" {
		t.Errorf("queuectl run of a job run on another host: stdout %q, want %q", got, "from-there\n")
	}
	if got := fg.stderr.String(); !strings.Contains(got, "oops\n") || !strings.Contains(got, "started on "+host+": its output shows when it ends") {
		t.Errorf("queuectl run of a job run on another host: stderr %q, want the job's and where it runs", got)
	}
}

// TestRunFromAnotherHostSaysWhatWasCut: queuectl run of a job that a
// worker on another host runs writes the last 64 KiB of each stream, kept
// with the run, when the attempt ends; when the stream wrote more than
// that, run says so on stderr, and where the full log is, as logs does:
// otherwise a Make recipe's output would begin mid-line with no word that
// the rest is elsewhere. A stream kept whole is not remarked on.
func TestRunFromAnotherHostSaysWhatWasCut(t *testing.T) {
	here := newPostgresHome(t)
	there := &qhome{t: t, dir: filepath.Join(t.TempDir(), "home"), db: here.db}
	host := fmt.Sprintf("qcut-%d", os.Getpid())

	// seq 1 40000 prints 228894 bytes: 223.5 KiB.
	fg := here.start("run", "--id", "big", "--shell", "seq 1 40000; echo warn >&2")
	waitFor(t, time.Minute, "queuectl run to enqueue its job", func() bool {
		out, _, _ := here.run("list", "--state", "pending")
		return strings.Contains(out, "big")
	})
	if out, err := onHost(t, there, host, "worker", "start", "--drain", "--no-spool").CombinedOutput(); err != nil {
		t.Fatalf("worker on %s: %v\n%s", host, err, out)
	}
	if code := fg.exit(t, time.Minute); code != 0 {
		t.Fatalf("queuectl run exited %d, want 0\nstderr: %s", code, fg.stderr)
	}
	if out := fg.stdout.String(); len(out) != 64<<10 || !strings.HasSuffix(out, "\n39999\n40000\n") {
		t.Errorf("queuectl run wrote %d bytes of stdout; want the last 65536 of the job's", len(out))
	}
	full := filepath.Join(there.dir, "logs", "big", "1.out")
	want := fmt.Sprintf("queuectl: job big: attempt 1 on %s: printed the last 64 KiB of 223.5 KiB of its stdout, kept with the run; the full log is %s:%s\n", host, host, full)
	if got := fg.stderr.String(); !strings.Contains(got, want) || !strings.Contains(got, "warn\n") {
		t.Errorf("queuectl run: stderr\n%s\nwant the job's warn and\n%s", got, want)
	}
	if got := fg.stderr.String(); strings.Contains(got, "of its stderr") {
		t.Errorf("queuectl run remarked on a stderr kept whole:\n%s", got)
	}
}

// TestLogsFromAnotherHostOfASilentStream: a stream that printed nothing has
// no log file, on its host as here. logs of it on another host says what
// logs on the run's host says (that the other stream printed), and neither
// it nor show --json names a "full log" there is not.
func TestLogsFromAnotherHostOfASilentStream(t *testing.T) {
	here := newPostgresHome(t)
	there := &qhome{t: t, dir: filepath.Join(t.TempDir(), "home"), db: here.db}
	host := fmt.Sprintf("qsilent-%d", os.Getpid())
	here.must("enqueue", "--id", "quiet", "--command", "echo only-out")
	if out, err := onHost(t, there, host, "worker", "start", "--drain", "--no-spool").CombinedOutput(); err != nil {
		t.Fatalf("worker on %s: %v\n%s", host, err, out)
	}
	if _, err := os.Stat(filepath.Join(there.dir, "logs", "quiet", "1.err")); !os.IsNotExist(err) {
		t.Fatalf("the silent stream's file on its host: %v, want none", err)
	}
	out, errText, code := here.run("logs", "quiet", "--stderr")
	if want := "queuectl: stderr is empty; stdout has 9 bytes: queuectl logs quiet\n"; code != 0 || out != "" || errText != want {
		t.Errorf("logs quiet --stderr on another host: exit %d, stdout %q, stderr %q; want exit 0, nothing, and %q", code, out, errText, want)
	}
	if out := here.must("logs", "quiet", "--stderr", "--all"); strings.Contains(out, "kept:") || strings.Contains(out, "1.err") {
		t.Errorf("logs quiet --stderr --all on another host: header %q names a log file the stream never made", out)
	}
	if js := here.must("show", "--json", "quiet"); strings.Contains(js, `"stderr_file"`) || !strings.Contains(js, `"stdout_file"`) {
		t.Errorf("show --json quiet on another host names a stderr file the stream never made:\n%s", js)
	}
}

// TestLogsOfALostRunOfAnotherHost: a run of another host whose worker died
// kept no tail, so nothing here knows whether it printed: logs says where
// its output is if it printed any, not that a file is there.
func TestLogsOfALostRunOfAnotherHost(t *testing.T) {
	h := newPostgresHome(t)
	host := fmt.Sprintf("qlost-%d", os.Getpid())
	jobOfDeadHost(t, h, host, "2s", nil)
	h.startRegistered(h.command("worker", "start", "--count", "1", "--no-spool"))
	waitFor(t, time.Minute, "the dead host's run to be recovered", func() bool {
		v := h.show("far")
		return len(v.Runs) > 0 && v.Runs[0].Outcome == "lost"
	})
	_, errText, _ := h.run("logs", "far", "--attempt", "1")
	want := regexp.MustCompile(`^queuectl: run 1 of job far ended lost on ` + host + `, which kept none of its stdout: if it printed any, it is in ` + host + `:\S+/far/1\.out\n`)
	if !want.MatchString(errText) {
		t.Errorf("logs of a lost run of another host: stderr %q; want it to say where its output is, if it printed any", errText)
	}
}

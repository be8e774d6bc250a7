package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	scriptCmds["groupgone"] = cmdGroupGone
	scriptCmds["waitfile"] = cmdWaitFile
}

// cmdGroupGone checks that no live process is left in the process group
// whose id is in FILE (a job wrote its $$ there):
//
//	groupgone long.pgid
func cmdGroupGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: groupgone FILE")
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	ts.Check(err)
	if alive := groupAlive(pgid); alive != neg {
		ts.Fatalf("process group %d: alive %v", pgid, alive)
	}
}

// cmdWaitFile waits (up to the script's deadline) until FILE exists and
// ends in a newline: a job wrote it.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(time.Minute)
	for {
		data, err := os.ReadFile(path)
		if err == nil && bytes.HasSuffix(data, []byte("\n")) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("timed out waiting for %s", args[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupAlive reports whether a process of group pgid is alive: found by
// its group, not by looking for names in the process table. Zombies, which
// have exited, do not count.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if state, pgrp, ok := procStat(e.Name()); ok && pgrp == strconv.Itoa(pgid) && !exited(state) {
			return true
		}
	}
	return false
}

// procStat reads a process's state and process group from /proc/PID/stat
// ("pid (comm) S ppid pgrp …", comm may hold spaces and parentheses);
// ok is false when there is no such process.
func procStat(pid string) (state, pgrp string, ok bool) {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return "", "", false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 3 {
		return "", "", false
	}
	return f[0], f[2], true
}

// exited reports whether a process state is a zombie's or a dead one's:
// it has exited, and holds nothing.
func exited(state string) bool { return state == "Z" || state == "X" }

// readPGID waits for a job to write its shell's pid ($$: its process group)
// to path.
func readPGID(t *testing.T, path string) int {
	t.Helper()
	var pgid int
	waitFor(t, time.Minute, "the job to start", func() bool {
		data, err := os.ReadFile(path)
		if err != nil || !bytes.HasSuffix(data, []byte("\n")) {
			return false
		}
		pgid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	})
	return pgid
}

// A worker SIGKILLed while it stops a canceled job (its group got TERM and
// ignores it; the worker waits for stop-timeout): the group dies with the
// worker (its guard kills it), the waiting `cancel` returns 0, and the job
// never runs again. With no worker left, the cancel recovers the dead
// worker's run itself, as a reaper would; with one started meanwhile,
// whichever comes first does.
// TestCancelSaysWhyItWaits: cancel of a job whose processes trap TERM
// waits for its worker's KILL, stop-timeout after the TERM (30 s by
// default); it says so a second in, rather than nothing until then.
func TestCancelSaysWhyItWaits(t *testing.T) {
	h := newHome(t)
	h.must("config", "set", "stop-timeout", "3s")
	started := filepath.Join(t.TempDir(), "started")
	h.must("enqueue", "--id", "stubborn", "--command", "trap '' TERM; touch "+started+"; while :; do sleep 0.05; done")
	h.start("worker", "start", "--no-spool")
	waitFor(t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	out, errText, code := h.run("cancel", "stubborn")
	if code != 0 || out != "Canceled job stubborn: its processes are stopped\n" {
		t.Fatalf("cancel: exit %d, stdout %q, stderr %q", code, out, errText)
	}
	want := "queuectl: job stubborn is still running a second after SIGTERM: killed 3s after it (stop-timeout); cancel --no-wait returns at once\n"
	if errText != want {
		t.Errorf("cancel of a job that traps TERM: stderr %q, want %q", errText, want)
	}
}

func TestCancelSurvivesWorkerKill(t *testing.T) {
	t.Run("no worker left", func(t *testing.T) {
		cancelSurvivesWorkerKill(t, false, "Canceled job stubborn: its worker was gone; its processes are stopped\n")
	})
	t.Run("another worker", func(t *testing.T) {
		cancelSurvivesWorkerKill(t, true, "Canceled job stubborn: its processes are stopped\n",
			"Canceled job stubborn: its worker was gone; its processes are stopped\n")
	})
}

func cancelSurvivesWorkerKill(t *testing.T, another bool, said ...string) {
	h := newHome(t)
	dir := t.TempDir()
	pgidFile, termFile := filepath.Join(dir, "pgid"), filepath.Join(dir, "term")
	h.must("enqueue", "--id", "stubborn", "--command", fmt.Sprintf(
		`(trap '' TERM; exec sleep 300) & trap 'echo term > %s' TERM; echo $$ > %s; while :; do sleep 0.05; done`,
		termFile, pgidFile))
	w1 := h.start("worker", "start", "--no-spool")
	pgid := readPGID(t, pgidFile)
	cancel := h.start("cancel", "stubborn")
	waitFor(t, time.Minute, "the worker to send TERM", func() bool {
		_, err := os.Stat(termFile)
		return err == nil
	})
	w1.cmd.Process.Signal(syscall.SIGKILL)
	<-w1.done
	waitFor(t, 30*time.Second, "the job's process group to die with its worker", func() bool { return !groupAlive(pgid) })
	if another {
		h.start("worker", "start", "--no-spool")
	}
	if code := cancel.exit(t, runLimit); code != 0 {
		t.Fatalf("cancel exited %d after the worker was killed\n%s", code, cancel.stderr)
	}
	if out := cancel.stdout.String(); !slices.Contains(said, out) {
		t.Errorf("cancel said %q, want one of %q", out, said)
	}
	if groupAlive(pgid) {
		t.Errorf("process group %d outlived the cancel", pgid)
	}
	v := h.show("stubborn")
	if v.State != "canceled" || len(v.Runs) != 1 || v.Runs[0].Outcome != "lost" {
		t.Errorf("job = %+v, want canceled with its one run lost", v)
	}
}

// A worker is SIGKILLed while it runs two jobs, and no worker runs when
// they are canceled: cancel (and cancel --no-wait) recovers each run
// itself, as a reaper would, and the jobs end canceled at once, their
// process groups gone, instead of waiting for a worker that may never
// start.
func TestCancelOfKilledWorkersJobs(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	for _, id := range []string{"a", "b"} {
		h.must("enqueue", "--id", id, "--command", fmt.Sprintf(
			`(trap '' TERM; exec sleep 300) & echo $$ > %s; wait`, filepath.Join(dir, id)))
	}
	w := h.start("worker", "start", "--no-spool", "--count", "2")
	pgids := []int{readPGID(t, filepath.Join(dir, "a")), readPGID(t, filepath.Join(dir, "b"))}
	w.signal(t, syscall.SIGKILL)
	w.exit(t, 5*time.Second)

	for _, c := range []struct{ args []string }{{[]string{"cancel", "a"}}, {[]string{"cancel", "--no-wait", "b"}}} {
		p := h.start(c.args...)
		if code := p.exit(t, 30*time.Second); code != 0 {
			t.Fatalf("%v exited %d\n%s", c.args, code, p.stderr)
		}
		id := c.args[len(c.args)-1]
		if want := "Canceled job " + id + ": its worker was gone; its processes are stopped\n"; p.stdout.String() != want {
			t.Errorf("%v said %q on stdout, %q on stderr; want %q", c.args, p.stdout, p.stderr, want)
		}
		v := h.show(id)
		if v.State != "canceled" || len(v.Runs) != 1 || v.Runs[0].Outcome != "lost" {
			t.Errorf("job %s = %+v, want canceled with its one run lost", id, v)
		}
	}
	for _, pgid := range pgids {
		if groupAlive(pgid) {
			t.Errorf("process group %d outlived the cancel", pgid)
		}
	}
}

// Ctrl-C on `run` cancels its job: the worker stops it, and run exits 130.
func TestRunInterruptedCancelsItsJob(t *testing.T) {
	h := newHome(t)
	h.start("worker", "start", "--no-spool")
	g := newGate(t)
	r := h.start("run", "--id", "foreground", "--shell", g.command())
	g.waitStarted(t)
	r.signal(t, syscall.SIGINT)
	if code := r.exit(t, 30*time.Second); code != 130 {
		t.Fatalf("run exit %d after SIGINT, want 130\nstderr: %s", code, r.stderr)
	}
	v := h.show("foreground")
	if v.State != "canceled" || len(v.Runs) != 1 || v.Runs[0].Outcome != "canceled" {
		t.Errorf("job after Ctrl-C on run = %+v, want canceled, its run stopped", v)
	}
}

// TestConcurrentHoldAndCancelSayWhatTheyDid: of several `hold` (then
// `cancel`) processes given the same jobs at once, exactly one says it
// held (canceled) each job, and the others that it was so already: the
// words come from the store's answer to the change itself, not from a read
// before it, which another process may have overtaken.
func TestConcurrentHoldAndCancelSayWhatTheyDid(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { concurrentHoldAndCancel(t, newHome(t)) })
	t.Run("postgres", func(t *testing.T) { concurrentHoldAndCancel(t, newPostgresHome(t)) })
}

func concurrentHoldAndCancel(t *testing.T, h *qhome) {
	const jobs, procs = 40, 4
	var ids []string
	var batch strings.Builder
	for i := range jobs {
		ids = append(ids, fmt.Sprintf("j%02d", i))
		fmt.Fprintf(&batch, `{"id": %q, "command": "true", "delay": "1h"}`+"\n", ids[i])
	}
	enqueue := h.command("enqueue", "-q", "-")
	enqueue.Stdin = strings.NewReader(batch.String())
	if out, err := enqueue.CombinedOutput(); err != nil {
		t.Fatalf("enqueue -: %v\n%s", err, out)
	}
	for _, tc := range []struct{ verb, did, already string }{
		{"hold", "Held job %s", "Job %s was held already"},
		{"cancel", "Canceled job %s", "Job %s was canceled already"},
	} {
		var ps []*proc
		for range procs {
			ps = append(ps, h.start(append([]string{tc.verb}, ids...)...))
		}
		var out strings.Builder
		for _, p := range ps {
			if code := p.exit(t, runLimit); code != 0 {
				t.Fatalf("queuectl %s: exit %d\nstderr: %s", tc.verb, code, p.stderr)
			}
			out.WriteString(p.stdout.String())
		}
		lines := strings.Split(out.String(), "\n")
		for _, id := range ids {
			did, already := fmt.Sprintf(tc.did, id), fmt.Sprintf(tc.already, id)
			if n, m := countLines(lines, did), countLines(lines, already); n != 1 || m != procs-1 {
				t.Errorf("%d concurrent queuectl %s of job %s: %q said %d times, %q %d times; want once and %d times",
					procs, tc.verb, id, did, n, already, m, procs-1)
			}
		}
	}
}

func countLines(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}

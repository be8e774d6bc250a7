package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// startWorker runs w until the test ends (soft stop, then Run's return).
func startWorker(t testing.TB, w *Worker) {
	t.Helper()
	w.Drain = false
	soft, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(soft, context.Background()) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		case <-time.After(time.Minute):
			t.Errorf("Run did not return after a soft stop")
		}
	})
}

// pgidOf waits for a job to write its shell's pid ($$, the leader of its
// process group) to path, and returns it.
func pgidOf(tb testing.TB, path string) int {
	tb.Helper()
	var pgid int
	waitFor(tb, "the job to start and write "+path, func() bool {
		data, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(data), "\n") {
			return false
		}
		pgid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	})
	return pgid
}

// waitState waits (through the store's wake-ups) until job id is finished.
func waitState(tb testing.TB, s *claim.Store, id string) claim.Job {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	jobs, err := s.Wait(ctx, []string{id}, time.Second)
	if err != nil {
		tb.Fatalf("Wait(%s) = %v", id, err)
	}
	return jobs[0]
}

// A running job canceled through another store (another process's
// connection) is stopped by its worker: its whole process group — the
// shell, a background child, a grandchild — is gone, the run is closed as
// canceled, and the worker goes on with the next job.
func TestCancelStopsRunningJob(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	startWorker(t, w)
	pidFile := filepath.Join(t.TempDir(), "pgid")
	enqueue(t, s, claim.NewJob{ID: "long", Command: "sleep 300 & (sleep 300; true) & echo $$ > " + pidFile + "; wait"})
	pgid := pgidOf(t, pidFile)

	other, err := claim.Open(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if j, _, _, err := other.Cancel(context.Background(), "long"); err != nil || j.State != claim.Processing {
		t.Fatalf("Cancel = %s, %v; want processing, marked", j.State, err)
	}
	j := waitState(t, other, "long")
	if j.State != claim.Canceled {
		t.Fatalf("job after cancel = %s, want canceled", j.State)
	}
	// The run is closed only once the group is gone.
	if groupAlive(pgid) {
		t.Errorf("process group %d still has live processes after the run was closed", pgid)
	}
	runs, err := other.Runs(context.Background(), "long")
	if err != nil || len(runs) != 1 || runs[0].Outcome != claim.OutcomeCanceled || runs[0].Error != "canceled" {
		t.Errorf("runs = %+v, %v; want one run, outcome canceled", runs, err)
	}
	enqueue(t, s, claim.NewJob{ID: "next", Command: "true"})
	if j := waitState(t, other, "next"); j.State != claim.Completed {
		t.Errorf("next job = %s, want completed by the same worker", j.State)
	}
}

// A job that ignores TERM is KILLed after stop-timeout (1s here).
func TestCancelKillsJobIgnoringTerm(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	startWorker(t, w)
	pidFile := filepath.Join(t.TempDir(), "pgid")
	// Ignored signals stay ignored across exec: the sleeps ignore TERM too.
	enqueue(t, s, claim.NewJob{ID: "stubborn", Command: "trap '' TERM; echo $$ > " + pidFile + "; while :; do sleep 1; done"})
	pgid := pgidOf(t, pidFile)
	if _, _, _, err := s.Cancel(context.Background(), "stubborn"); err != nil {
		t.Fatal(err)
	}
	if j := waitState(t, s, "stubborn"); j.State != claim.Canceled {
		t.Fatalf("job = %s, want canceled", j.State)
	}
	if groupAlive(pgid) {
		t.Errorf("process group %d still alive after KILL", pgid)
	}
	runs, _ := s.Runs(context.Background(), "stubborn")
	if code := runs[0].ExitCode; code == nil || *code != 128+int(syscall.SIGKILL) {
		t.Errorf("run exit code = %v, want %d (KILL)", code, 128+int(syscall.SIGKILL))
	}
}

// A job stopped by a signal (kill -STOP, Ctrl-Z's SIGTSTP sent to it)
// cannot act on its TERM until it is continued: a cancel sends SIGCONT
// after the TERM, as systemd does, so that its trap cleans up and it ends
// at once, instead of waiting stopped for the KILL at stop-timeout (an
// hour here), which no trap outlives.
func TestCancelContinuesAStoppedJob(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	w.Config.StopTimeout = time.Hour
	startWorker(t, w)
	dir := t.TempDir()
	pidFile, trace := filepath.Join(dir, "pgid"), filepath.Join(dir, "trace")
	enqueue(t, s, claim.NewJob{ID: "stopped", Command: "trap 'echo term > " + trace + "; exit 0' TERM; echo $$ > " + pidFile + "; kill -STOP $$; echo resumed"})
	pgid := pgidOf(t, pidFile)
	waitFor(t, "the job to stop itself", func() bool {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pgid))
		i := bytes.LastIndexByte(data, ')')
		return i > 0 && bytes.HasPrefix(data[i+1:], []byte(" T"))
	})
	if _, _, _, err := s.Cancel(context.Background(), "stopped"); err != nil {
		t.Fatal(err)
	}
	if j := waitState(t, s, "stopped"); j.State != claim.Canceled {
		t.Fatalf("job = %s, want canceled", j.State)
	}
	if data, _ := os.ReadFile(trace); string(data) != "term\n" {
		t.Errorf("the job's TERM trap wrote %q, want %q: it never ran", data, "term\n")
	}
}

// A canceled job's shell that dies of its TERM leaves a command that
// traps it, cleaning up: that command keeps the stop's grace (stop-timeout,
// an hour here), neither a second TERM nor a KILL a second later (what the
// worker gives what a run leaves when it ended by itself).
func TestCancelKeepsStopTimeoutForWhatTheShellLeaves(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	w.Config.StopTimeout = time.Hour
	startWorker(t, w)
	dir := t.TempDir()
	pidFile, innerFile, trace, fifo := filepath.Join(dir, "pgid"), filepath.Join(dir, "inner"), filepath.Join(dir, "trace"), filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	inner := fmt.Sprintf(`trap 'echo term >> %s; read x < %s; echo cleaned >> %s; exit 0' TERM; echo $$ > %s; while :; do sleep 0.05; done`,
		trace, fifo, trace, innerFile)
	enqueue(t, s, claim.NewJob{ID: "cleanup", Command: "echo $$ > " + pidFile + "; sh -c " + shellQuote(inner)})
	pgid, innerPID := pgidOf(t, pidFile), pgidOf(t, innerFile)
	if _, _, _, err := s.Cancel(context.Background(), "cleanup"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job's shell to die of its TERM, and its command to trap it", func() bool {
		p, ok := readProc(pgid)
		data, _ := os.ReadFile(trace)
		return (!ok || p.zombie) && string(data) == "term\n"
	})
	// Three times what a run's leftovers get once it ended by itself: the
	// command must live on through all of it.
	for end := time.Now().Add(3 * leftoverGrace); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if p, ok := readProc(innerPID); !ok || p.zombie {
			t.Fatalf("the job's command, cleaning up after its TERM, was killed before stop-timeout")
		}
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("done\n")
	f.Close()
	if j := waitState(t, s, "cleanup"); j.State != claim.Canceled {
		t.Fatalf("job = %s, want canceled", j.State)
	}
	if data, _ := os.ReadFile(trace); string(data) != "term\ncleaned\n" {
		t.Errorf("the command's trace = %q, want one TERM and its cleanup's end", data)
	}
}

// Pending jobs canceled in a queue are never run, and the running one stops.
func TestCancelQueueStopsItsRuns(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	w.Slots = 1
	startWorker(t, w)
	pidFile := filepath.Join(t.TempDir(), "pgid")
	marker := filepath.Join(t.TempDir(), "ran")
	enqueue(t, s, claim.NewJob{ID: "first", Queue: "q", Command: "echo $$ > " + pidFile + "; exec sleep 300"})
	pgid := pgidOf(t, pidFile)
	enqueue(t, s, claim.NewJob{ID: "second", Queue: "q", Command: "touch " + marker})
	if _, _, err := s.CancelQueue(context.Background(), "q"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"first", "second"} {
		if j := waitState(t, s, id); j.State != claim.Canceled {
			t.Errorf("%s = %s, want canceled", id, j.State)
		}
	}
	if groupAlive(pgid) {
		t.Errorf("group %d of the running job survived the cancel", pgid)
	}
	if exists(marker) {
		t.Errorf("the canceled pending job ran")
	}
}

// A cancel seen between a claim and the run's start stops the run as soon
// as it is registered.
func TestSteeringKeepsEarlyCancel(t *testing.T) {
	var st steering
	id := claim.RunID{JobID: "a", Attempt: 1}
	st.stop([]claim.RunID{id})
	ctx, cancel := context.WithCancelCause(context.Background())
	st.add(id, cancel, time.Now().Add(time.Minute))
	if context.Cause(ctx) != errCanceled {
		t.Errorf("run registered after its cancel: cause %v, want errCanceled", context.Cause(ctx))
	}
	st.remove(id)
	if !st.idle() || len(st.early) != 0 {
		t.Errorf("steering after remove: %d running, %d early; want none", len(st.running), len(st.early))
	}
}

// BenchmarkCancelLatency measures, for a running `sleep 300`, the time from
// Store.Cancel (what the `cancel` command calls) until the job's process
// group is gone, and until the job is canceled in the store (when `cancel`
// returns). It reports the medians and the 99th percentiles in ms.
func BenchmarkCancelLatency(b *testing.B) {
	s := mustOpenStore(b)
	w := newWorker(b, s)
	w.Slots = 1
	startWorker(b, w)
	other, err := claim.Open(s.Path())
	if err != nil {
		b.Fatal(err)
	}
	defer other.Close()
	dir := b.TempDir()
	var gone, canceled []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		id := "sleep-" + strconv.Itoa(i)
		pidFile := filepath.Join(dir, id)
		enqueue(b, s, claim.NewJob{ID: id, Command: "echo $$ > " + pidFile + "; exec sleep 300"})
		pgid := pgidOf(b, pidFile)
		b.StartTimer()
		start := time.Now()
		if _, _, _, err := other.Cancel(context.Background(), id); err != nil {
			b.Fatal(err)
		}
		for syscall.Kill(-pgid, 0) == nil && groupAlive(pgid) {
			time.Sleep(50 * time.Microsecond)
		}
		gone = append(gone, time.Since(start))
		if j := waitState(b, other, id); j.State != claim.Canceled {
			b.Fatalf("%s = %s, want canceled", id, j.State)
		}
		canceled = append(canceled, time.Since(start))
	}
	b.StopTimer()
	report := func(ds []time.Duration, name string) {
		slices.Sort(ds)
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(ds[len(ds)/2]), "p50-"+name+"-ms")
		b.ReportMetric(ms(ds[len(ds)*99/100]), "p99-"+name+"-ms")
	}
	report(gone, "gone")
	report(canceled, "canceled")
}

// shellQuote quotes s for /bin/sh as one word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

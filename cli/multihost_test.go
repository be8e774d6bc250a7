package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
	"github.com/queuectl/queuectl/internal/testenv"
	"github.com/queuectl/queuectl/run"
)

// multiHostJobs is how many jobs TestManyHosts runs; QUEUECTL_TEST_HOST_JOBS
// raises it: 20000 for the full proof, which .ci/run sets (under -race on a
// 2-core machine, 2 minutes at a load of 12-18, 8 at 20-35).
func multiHostJobs(t *testing.T) int {
	if v := os.Getenv("QUEUECTL_TEST_HOST_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("QUEUECTL_TEST_HOST_JOBS=%q: %v", v, err)
		}
		return n
	}
	return 2000
}

// TestManyHosts: four "hosts" (workers in UTS namespaces of their own, each
// with its own hostname and home) × 8 slots share one PostgreSQL store.
// Every job completes exactly once; one host's worker is killed with
// SIGKILL while it runs jobs, and its runs are recovered by the other
// hosts after the lease (its pids mean nothing to them); `worker stop`
// from outside stops every host's worker.
func TestManyHosts(t *testing.T) {
	t.Parallel() // the longest test: those that mostly wait run beside it (see TestMain)
	dsn := pgtest.DSN(t)
	unshare := unshareUTS(t)
	bin, err := exec.LookPath("queuectl")
	if err != nil {
		t.Fatal(err)
	}
	jobs := multiHostJobs(t)
	outside := newHome(t)
	env := func(h *qhome) []string {
		return append(os.Environ(), "QUEUECTL_HOME="+h.dir, "QUEUECTL_DB="+dsn, "NO_COLOR=1")
	}
	admin := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env(outside)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("queuectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// A short lease, so that the killed host's runs come back soon.
	admin("config", "set", "heartbeat-interval", "1s")
	admin("config", "set", "lease", "3s")

	ran := t.TempDir() // one file per run: <job>.<attempt>.<hostname>
	s, err := claim.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	batch := make([]claim.NewJob, jobs)
	for i := range batch {
		// Every 10th job takes a while, so that the killed host has runs
		// in flight; the others are quick.
		cmd := `touch "$RAN/$QUEUECTL_JOB_ID.$QUEUECTL_ATTEMPT.$(hostname)"`
		if i%10 == 0 {
			cmd = "sleep 0.5; " + cmd
		}
		batch[i] = claim.NewJob{ID: fmt.Sprintf("job-%05d", i), Command: cmd, Env: map[string]string{"RAN": ran}}
	}
	for i := 0; i < jobs; i += 1000 {
		if _, err := s.EnqueueAll(t.Context(), batch[i:min(i+1000, jobs)]); err != nil {
			t.Fatal(err)
		}
	}

	hosts := make([]*proc, 4)
	for i := range hosts {
		h := newHome(t)
		name := fmt.Sprintf("qhost-%d-%d", os.Getpid(), i)
		p := &proc{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
		p.cmd = exec.Command(unshare, "--uts", "sh", "-c", `hostname "$1" && exec "$2" worker start --count 8 --no-spool`, "sh", name, bin)
		p.cmd.Env = env(h)
		p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { p.err = p.cmd.Wait(); close(p.done) }()
		t.Cleanup(func() {
			p.cmd.Process.Kill()
			<-p.done
		})
		hosts[i] = p
	}

	counts := func() map[claim.State]int {
		c, err := s.Counts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Kill host 0's worker once it is running jobs.
	waitFor(t, 2*time.Minute, "host 0 running jobs", func() bool {
		fs, err := s.InFlight(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if strings.HasPrefix(f.Host, fmt.Sprintf("qhost-%d-0/", os.Getpid())) {
				return true
			}
		}
		return false
	})
	if err := hosts[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	hosts[0].exit(t, time.Minute)

	// Minutes for the full proof on a busy machine: about 30 ms a job.
	began := time.Now()
	waitFor(t, max(5*time.Minute, time.Duration(jobs)*30*time.Millisecond), fmt.Sprintf("%d jobs completed", jobs),
		func() bool { return counts()[claim.Completed] == jobs })
	t.Logf("%d jobs completed %v after the first host was killed", jobs, time.Since(began).Round(time.Second))
	if c := counts(); c[claim.Pending]+c[claim.Processing]+c[claim.Failed]+c[claim.Dead] != 0 {
		t.Errorf("counts after every job completed: %v", c)
	}

	// Each job completed once; a second run only after a lost one.
	lost := 0
	for i := range jobs {
		id := fmt.Sprintf("job-%05d", i)
		runs, err := s.Runs(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		completed := 0
		for _, r := range runs {
			switch r.Outcome {
			case claim.OutcomeCompleted:
				completed++
			case claim.OutcomeLost:
				lost++
				if !strings.HasPrefix(r.Host, fmt.Sprintf("qhost-%d-0/", os.Getpid())) {
					t.Errorf("job %s: run %d lost on %s, not on the killed host", id, r.Attempt, r.Host)
				}
			default:
				t.Errorf("job %s: run %d ended %q", id, r.Attempt, r.Outcome)
			}
		}
		if completed != 1 {
			t.Errorf("job %s completed %d times, want once", id, completed)
		}
	}
	if lost == 0 {
		t.Error("no run of the killed host was recovered as lost")
	}
	t.Logf("%d jobs on 4 hosts × 8 slots; %d runs lost with the killed host, recovered by the others", jobs, lost)

	// worker stop from outside every namespace stops every host's worker.
	admin("worker", "stop", "--wait", "--timeout", "60s")
	for i, p := range hosts[1:] {
		if code := p.exit(t, time.Minute); code != 0 {
			t.Errorf("host %d's worker exited %d after worker stop\nstderr: %s", i+1, code, p.stderr)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(ran, "*")); len(files) < jobs {
		t.Errorf("%d run files for %d jobs", len(files), jobs)
	}
}

// startOnHost starts queuectl in a UTS namespace of its own, named name: a
// host of its own to the store, whose pids are not this host's. It skips
// the test unless it runs as root with unshare(1).
func (h *qhome) startOnHost(name string, args ...string) *proc {
	h.t.Helper()
	unshare := unshareUTS(h.t)
	cmd := h.command(args...)
	cmd.Args = append([]string{unshare, "--uts", "sh", "-c", `hostname "$1" && shift && exec "$@"`, "sh", name, cmd.Path}, args...)
	cmd.Path = unshare
	p := &proc{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	h.t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	return p
}

// TestCancelAcrossHosts: `cancel` on one host stops a job running on
// another: the job's process group there is gone (its background child
// too) when cancel returns, and the job is canceled, its run stopped.
func TestCancelAcrossHosts(t *testing.T) {
	h := newPostgresHome(t)
	other := newHome(t)
	other.db = h.db
	host := fmt.Sprintf("qcancel-%d", os.Getpid())
	w := other.startOnHost(host, "worker", "start", "--count", "1", "--no-spool")
	dir := t.TempDir()
	h.must("enqueue", "--id", "far", "--env", "DIR="+dir, "--command", `echo $$ > "$DIR/pgid"; sleep 300 & wait`)
	pgid := readPGID(t, filepath.Join(dir, "pgid"))

	began := time.Now()
	out, errText, code := h.run("cancel", "far")
	took := time.Since(began)
	if code != 0 || out != "Canceled job far: its processes are stopped\n" {
		t.Fatalf("cancel of a job on another host: exit %d, stdout %q\nstderr: %s", code, out, errText)
	}
	t.Logf("cancel from this host stopped the job on %s in %v", host, took.Round(time.Millisecond))
	if groupAlive(pgid) {
		t.Errorf("process group %d on the other host outlived the cancel", pgid)
	}
	v := h.show("far")
	if v.State != "canceled" || len(v.Runs) != 1 || v.Runs[0].Outcome != "canceled" {
		t.Errorf("job after cancel = %+v, want canceled, its one run stopped", v)
	}
	if runs := runsOf(t, h, "far"); len(runs) != 1 || !strings.HasPrefix(runs[0].Host, host+"/") {
		t.Errorf("runs %+v, want one on host %s", runs, host)
	}
	if !strings.Contains(w.stderr.String(), "job far canceled") {
		t.Errorf("the other host's worker did not say the job was canceled:\n%s", w.stderr)
	}
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

// unshareUTS returns the path of unshare(1), with which a test runs a
// process as another host (a UTS namespace of its own): it needs root.
// Without either the test is skipped, or fails under CI=true.
func unshareUTS(t *testing.T) string {
	t.Helper()
	testenv.Root(t, "run a process as another host (unshare --uts)")
	return testenv.LookPath(t, "unshare", "util-linux")
}

// TestDoctorSpoolWithWorkersElsewhere: on PostgreSQL, a worker reads its
// own host's spool only. A file waiting in the spool of a host whose
// workers are all elsewhere is never ingested, and doctor says so (warn,
// exit 1) instead of taking the other hosts' workers for its ingester;
// once a worker of this host starts, the file becomes a job.
func TestDoctorSpoolWithWorkersElsewhere(t *testing.T) {
	h := newPostgresHome(t)
	other := newHome(t)
	other.db = h.db
	w := other.startOnHost(fmt.Sprintf("qspool-%d", os.Getpid()), "worker", "start", "--no-spool")
	waitFor(t, time.Minute, "the other host's worker to register", func() bool {
		return strings.Contains(h.must("status"), "workers: 1")
	})
	if err := os.WriteFile(filepath.Join(h.dir, "spool", "a.json"), []byte(`{"id": "a", "command": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errText, code := h.run("doctor")
	if code != 1 || !regexp.MustCompile(`(?m)^warn +spool +1 file\(s\) wait in .*spool and no worker of this host ingests them`).MatchString(out) {
		t.Errorf("doctor with a spool file and workers on another host only: exit %d\n%s%s\nwant exit 1 and the spool check's warning", code, out, errText)
	}
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
	h.must("worker", "start", "--drain")
	if v := h.show("a"); v.State != "completed" {
		t.Errorf("job a after a worker of its host drained: %s, want completed", v.State)
	}
}

// jobOfDeadHost runs job far of h (a PostgreSQL home, given a heartbeat
// of 1 s and lease as its lease) on a worker of another host, host, and
// kills that worker (SIGKILL) while the job's processes run on: a host
// that crashed, or is cut off. then, when not nil, runs once the job has
// started, before the kill.
func jobOfDeadHost(t *testing.T, h *qhome, host, lease string, then func()) {
	t.Helper()
	h.must("config", "set", "heartbeat-interval", "1s")
	h.must("config", "set", "lease", lease)
	other := newHome(t)
	other.db = h.db
	w := other.startOnHost(host, "worker", "start", "--count", "1", "--no-spool")
	dir := t.TempDir()
	h.must("enqueue", "--id", "far", "--env", "DIR="+dir, "--command", `echo $$ > "$DIR/pgid"; sleep 300 & wait`)
	pgid := readPGID(t, filepath.Join(dir, "pgid"))
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	if then != nil {
		then()
	}
	w.signal(t, syscall.SIGKILL)
	w.exit(t, time.Minute)
}

// TestCancelOnACrashedHostSaysWhy: cancel of a job whose worker, on
// another host, died (its host crashed, or is cut off) can end only once
// the run's lease lapses; while it waits for that, it says why, instead of
// seeming to hang, and then cancels the job.
func TestCancelOnACrashedHostSaysWhy(t *testing.T) {
	h := newPostgresHome(t)
	host := fmt.Sprintf("qcrash-%d", os.Getpid())
	jobOfDeadHost(t, h, host, "3s", nil)

	p := h.start("cancel", "far")
	code := p.exit(t, time.Minute)
	if code != 0 || p.stdout.String() != "Canceled job far: its worker was gone; its processes are stopped\n" {
		t.Fatalf("cancel of a job of a crashed host: exit %d, stdout %q\nstderr: %s", code, p.stdout, p.stderr)
	}
	said := regexp.MustCompile(`(?m)^queuectl: job far: its worker \S+ on ` + host + ` has not been heard from for \d+s: ` +
		`it is canceled once its run's lease lapses, within \d+s, unless that worker stops it first$`)
	if !said.MatchString(p.stderr.String()) {
		t.Errorf("cancel of a job of a crashed host: stderr %q; want it to say what it waits for", p.stderr)
	}
}

// waitLate waits until the one worker of h, killed by jobOfDeadHost, is
// late as cancel deems it: no heartbeat for more than two intervals (1 s
// each) and a second.
func waitLate(t *testing.T, h *qhome) {
	t.Helper()
	waitFor(t, time.Minute, "the crashed worker's heartbeat to be late", func() bool {
		beats := heartbeats(t, h)
		return len(beats) == 1 && time.Since(beats[0]) > 3*time.Second
	})
}

// heartbeats returns the last heartbeat of each worker status lists.
func heartbeats(t *testing.T, h *qhome) []time.Time {
	t.Helper()
	var st struct {
		Workers []struct {
			HeartbeatAt time.Time `json:"heartbeat_at"`
		} `json:"workers"`
	}
	if err := json.Unmarshal([]byte(h.must("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	beats := make([]time.Time, len(st.Workers))
	for i, w := range st.Workers {
		beats[i] = w.HeartbeatAt
	}
	return beats
}

// TestCancelOnALateHostSaysNoSIGTERM: cancel of a job whose worker, on
// another host, is already known to be silent says that it waits for the
// run's lease, and not that the job "is still running a second after
// SIGTERM" and will be killed after stop-timeout: no worker sent that TERM,
// and none will send the KILL.
func TestCancelOnALateHostSaysNoSIGTERM(t *testing.T) {
	h := newPostgresHome(t)
	jobOfDeadHost(t, h, fmt.Sprintf("qlate-%d", os.Getpid()), "3s", nil)
	waitLate(t, h)

	p := h.start("cancel", "far")
	if code := p.exit(t, time.Minute); code != 0 {
		t.Fatalf("cancel of a job of a late host: exit %d\nstdout: %s\nstderr: %s", code, p.stdout, p.stderr)
	}
	if strings.Contains(p.stderr.String(), "SIGTERM") || !strings.Contains(p.stderr.String(), "has not been heard from") {
		t.Errorf("cancel of a job of a late host: stderr %q; want it to say it waits for the lease, and nothing of a SIGTERM", p.stderr)
	}
}

// TestCancelOnALateHostSaysItsLease: the time cancel says it waits for a
// silent worker of another host is that of the run's own lease, which its
// worker renewed with the lease it started with, not the one config holds
// now (config set lease reaches running workers only once they restart).
func TestCancelOnALateHostSaysItsLease(t *testing.T) {
	h := newPostgresHome(t)
	jobOfDeadHost(t, h, fmt.Sprintf("qlease-%d", os.Getpid()), "60s", func() { h.must("config", "set", "lease", "3s") })

	p := h.start("cancel", "far")
	said := regexp.MustCompile(`has not been heard from for \d+s: it is canceled once its run's lease lapses, within (\S+),`)
	var m []string
	waitFor(t, time.Minute, "cancel to say why it waits", func() bool {
		m = said.FindStringSubmatch(p.stderr.String())
		return m != nil
	})
	p.signal(t, syscall.SIGINT)
	p.exit(t, time.Minute)
	// The run's lease lapses 60 s after its last renewal, 4 s after which
	// another host may take it for lost.
	if d, err := time.ParseDuration(m[1]); err != nil || d < 30*time.Second {
		t.Errorf("cancel of a job whose worker renewed a 60s lease said %q", m[0])
	}
}

// TestCancelOnALateHostCountsItsLook: the time cancel says it waits for a
// silent worker of another host counts, besides the run's lease and the
// grace after it, one poll interval: the run is taken back at a look after
// the lease lapsed, and cancel looks once a poll interval. The interval is
// a minute here, the lease 3 s: a bound of the lease and the grace alone
// would be 7 s at most.
func TestCancelOnALateHostCountsItsLook(t *testing.T) {
	h := newPostgresHome(t)
	jobOfDeadHost(t, h, fmt.Sprintf("qlook-%d", os.Getpid()), "3s", nil)
	h.must("config", "set", "poll-interval", "1m")
	waitLate(t, h)

	p := h.start("cancel", "far")
	said := regexp.MustCompile(`has not been heard from for \d+s: it is canceled once its run's lease lapses, within (\S+),`)
	var m []string
	// Cancel says it at its first wake-up a second after it began; a
	// change to the store wakes it (an enqueue, to a queue no worker serves).
	waitFor(t, time.Minute, "cancel to say why it waits", func() bool {
		h.must("enqueue", "--queue", "nudge", "--command", "true")
		m = said.FindStringSubmatch(p.stderr.String())
		return m != nil
	})
	p.signal(t, syscall.SIGINT)
	p.exit(t, time.Minute)
	if d, err := time.ParseDuration(m[1]); err != nil || d < time.Minute+run.OtherHostGrace {
		t.Errorf("cancel with a poll interval of 1m said %q; want at least %v", m[0], time.Minute+run.OtherHostGrace)
	}
}

// TestWorkerStopWaitNamesTheSilentWorker: worker stop --wait that times
// out while a worker of another host that died still counts as running
// (until its lease lapses) names it, and says that it has not been heard
// from, instead of only a count of workers "still running".
func TestWorkerStopWaitNamesTheSilentWorker(t *testing.T) {
	h := newPostgresHome(t)
	other := newHome(t)
	other.db = h.db
	host := fmt.Sprintf("qsilent-%d", os.Getpid())
	w := other.startOnHost(host, "worker", "start", "--no-spool")
	waitFor(t, time.Minute, "the other host's worker to register", func() bool {
		return strings.Contains(h.must("status"), "workers: 1")
	})
	w.signal(t, syscall.SIGKILL)
	w.exit(t, time.Minute)
	waitFor(t, time.Minute, "the dead worker to be late with its heartbeat", func() bool {
		out, _, _ := h.run("doctor")
		return strings.Contains(out, " is late: ")
	})

	out, errText, code := h.run("worker", "stop", "--wait", "--timeout", "1s")
	want := regexp.MustCompile(`(?m)^queuectl: error: 1 worker\(s\) still running after 1s: pid \d+ on ` + host +
		`/\S+, not heard from for \d+s \(a worker of another host counts as running until its lease lapses, \d+s after its last heartbeat\)$`)
	if code != 124 || out != "" || !want.MatchString(errText) {
		t.Errorf("worker stop --wait beside a dead worker of another host: exit %d, stdout %q, stderr\n%s\nwant exit 124 naming it", code, out, errText)
	}
	// Said as the wait begins, too, rather than waiting without a word
	// for its lease.
	waiting := regexp.MustCompile(`(?m)^queuectl: waiting for pid \d+ on ` + host + `/\S+, not heard from for \d+s \(a worker of another host counts as running until its lease lapses`)
	if !waiting.MatchString(errText) || strings.Count(errText, "waiting for") != 1 {
		t.Errorf("worker stop --wait beside a dead worker of another host: stderr\n%s\nwant it to say once what it waits for", errText)
	}
}

// TestLivenessByTheWorkersOwnLease: whether a worker of another host is
// live is judged by the lease and heartbeat interval it runs with, as it
// registered them, not by this host's config: a worker started with a
// heartbeat of 20s and a lease of 60s keeps both until it restarts, and a
// reader whose config says 1s and 3s must not call it gone (status) or
// late (doctor) between its heartbeats.
func TestLivenessByTheWorkersOwnLease(t *testing.T) {
	h := newPostgresHome(t)
	h.must("config", "set", "lease", "60s")
	h.must("config", "set", "heartbeat-interval", "20s")
	other := newHome(t)
	other.db = h.db
	w := other.startOnHost(fmt.Sprintf("qownlease-%d", os.Getpid()), "worker", "start", "--no-spool")
	waitFor(t, time.Minute, "the other host's worker to register", func() bool {
		return strings.Contains(h.must("status"), "workers: 1")
	})
	h.must("config", "set", "heartbeat-interval", "1s")
	h.must("config", "set", "lease", "3s")

	// Read by this host's config the worker is gone 3s and the grace for
	// another host's clock after a heartbeat; by its own it is live until
	// 60s after one, and it renews every 20s. Watch it until a heartbeat
	// is older than the reader's lease and grace.
	waitFor(t, time.Minute, "a heartbeat of the other host's worker older than this host's lease", func() bool {
		beats := heartbeats(t, h)
		if len(beats) != 1 {
			t.Fatalf("status --json lists %d workers, want the other host's live one\nworker stderr: %s", len(beats), w.stderr)
		}
		return time.Since(beats[0]) > 10*time.Second
	})
	out, _, _ := h.run("doctor")
	if strings.Contains(out, "gone without stopping") || strings.Contains(out, " is late: ") {
		t.Errorf("doctor beside a live worker of another host with its own lease:\n%s", out)
	}
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

// TestRmRemovesLogsOnOtherHosts: the log files of a job's runs stay on the
// host that ran it; `rm` on another host removes the job from the store and
// the logs of its own home, and the worker of the host that ran it removes
// its logs/<id> at its next pass over logs/ (every 60 heartbeat intervals:
// 6 s here). A job the store still has keeps its logs there.
func TestRmRemovesLogsOnOtherHosts(t *testing.T) {
	h := newPostgresHome(t)
	h.must("config", "set", "heartbeat-interval", "100ms")
	other := newHome(t)
	other.db = h.db
	w := other.startOnHost(fmt.Sprintf("qrmlogs-%d", os.Getpid()), "worker", "start", "--count", "1", "--no-spool")
	for _, id := range []string{"far", "kept"} {
		h.must("enqueue", "--id", id, "--command", "echo out; echo err >&2")
	}
	h.must("wait", "far", "kept")
	logs := filepath.Join(other.dir, "logs")
	for _, f := range []string{"far/1.out", "far/1.err", "kept/1.out"} {
		if _, err := os.Stat(filepath.Join(logs, f)); err != nil {
			t.Fatalf("the other host's log file: %v", err)
		}
	}

	h.must("rm", "far")
	began := time.Now()
	waitFor(t, time.Minute, "the other host's logs/far to be removed", func() bool {
		_, err := os.Lstat(filepath.Join(logs, "far"))
		return os.IsNotExist(err)
	})
	t.Logf("logs/far removed on the other host %v after rm", time.Since(began).Round(time.Millisecond))
	if _, err := os.Stat(filepath.Join(logs, "kept", "1.out")); err != nil {
		t.Errorf("the log file of a job the store has: %v", err)
	}
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

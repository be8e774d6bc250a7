package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// Tests of a PostgreSQL server that crashes under workers on two hosts: a
// cluster of the test's own (pgtest.NewCluster), stopped as a crash would
// (every server process quits at once, WAL buffers unflushed) and started
// again. SPEC §6: no job runs on two hosts at once, and nothing accepted is
// lost, whenever the crash comes.

// crashSettings make the test's server keep a commit that did not wait for
// the WAL flush in its WAL buffers for up to 10 s (by default 0.2 s, or
// until 1 MB of WAL waits), so that a crash takes back every such commit of
// the last moments: what a worker acted on must not be one of them. A
// crash here is of the server's processes, not of the machine: what they
// wrote is kept without fsync.
var crashSettings = []string{"wal_writer_delay = 10s", "wal_writer_flush_after = 1GB",
	"wal_buffers = 16MB", "full_page_writes = off", "fsync = off"}

// crashJob is a job command around body that notes in $DIR/side when each
// of its runs starts and ends (job, attempt, host, unix nanoseconds), and
// notes an overlap when another run of the job still holds its lock file
// (a run stopped before its end leaves no end line; its lock goes with its
// last process).
func crashJob(body string) string {
	return `exec 9>>"$DIR/$QUEUECTL_JOB_ID.lock"; run="$QUEUECTL_JOB_ID $QUEUECTL_ATTEMPT $(hostname)"
flock -n 9 || echo "overlap $run" >> "$DIR/side"
echo "start $run $(date +%s%N)" >> "$DIR/side"
` + body + `
echo "end $run $(date +%s%N)" >> "$DIR/side"`
}

// gated is a crashJob body that waits for the file $DIR/open.
const gated = `while [ ! -e "$DIR/open" ]; do sleep 0.02; done`

// sideRun is one run of a job as its side-effect lines tell it.
type sideRun struct {
	job, attempt, host string
	start, end         int64 // unix nanoseconds; end 0: no end line (stopped)
}

// readSide reads $DIR/side: the runs of each job, and the overlap lines.
func readSide(t *testing.T, dir string) (runs map[string][]*sideRun, overlaps []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "side"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	runs = map[string][]*sideRun{}
	open := map[string]*sideRun{} // job attempt host: the run whose end is still to come
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if f[0] == "overlap" {
			overlaps = append(overlaps, l)
			continue
		}
		if len(f) != 5 {
			t.Fatalf("side-effect line %q", l)
		}
		at, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			t.Fatalf("side-effect line %q: %v", l, err)
		}
		key := strings.Join(f[1:4], " ")
		switch f[0] {
		case "start":
			r := &sideRun{job: f[1], attempt: f[2], host: f[3], start: at}
			runs[r.job] = append(runs[r.job], r)
			open[key] = r
		case "end":
			if r := open[key]; r != nil {
				r.end = at
				delete(open, key)
			}
		}
	}
	return runs, overlaps
}

// checkSide checks $DIR/side against SPEC §6: each of ids ran to its end,
// and no two runs of one job overlapped (on one host or two). It returns
// how many runs there were, and how many were stopped before their end.
func checkSide(t *testing.T, dir string, ids []string) (total, stopped int) {
	t.Helper()
	runs, overlaps := readSide(t, dir)
	for _, o := range overlaps {
		t.Errorf("a run started while another run of its job was still running: %s", o)
	}
	for _, id := range ids {
		rs := runs[id]
		total += len(rs)
		ended := 0
		for _, r := range rs {
			if r.end == 0 {
				stopped++
				if stopped <= 5 {
					t.Logf("job %s: run %s on %s started at %d and was stopped before its end", id, r.attempt, r.host, r.start)
				}
			} else {
				ended++
			}
		}
		if ended == 0 {
			t.Errorf("job %s: no run ran to its end (%d started)", id, len(rs))
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].start < rs[j].start })
		for i := 1; i < len(rs); i++ {
			if p := rs[i-1]; p.end == 0 || p.end > rs[i].start {
				if p.end != 0 {
					t.Errorf("job %s: run %s on %s [%d, %d] overlaps run %s on %s starting %d (%.3f s together)",
						id, p.attempt, p.host, p.start, p.end, rs[i].attempt, rs[i].host, rs[i].start,
						float64(p.end-rs[i].start)/1e9)
				}
			}
		}
	}
	return total, stopped
}

// crashHosts is a test's cluster, its store's admin home, and a way to
// start workers on hosts of their own.
type crashHosts struct {
	t       *testing.T
	cluster *pgtest.Cluster
	admin   *qhome
	dir     string // $DIR of the jobs
	n       int
}

func newCrashHosts(t *testing.T, cluster *pgtest.Cluster, heartbeat, lease string) *crashHosts {
	// Hosts are UTS namespaces (startOnHost), the jobs use flock(1): under
	// CI=true, where these tests must run, a missing one fails the test.
	_, unshare := exec.LookPath("unshare")
	_, flock := exec.LookPath("flock")
	if os.Getenv("CI") == "true" && (os.Geteuid() != 0 || unshare != nil || flock != nil) {
		t.Fatal("the server crash tests need root, unshare(1) and flock(1) (util-linux); under CI=true they must run")
	}
	needTools(t, "flock")
	dsn, drop, err := pgtest.NewSchema(cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	// Dropped only if the server is up at the end; the cluster goes anyway.
	t.Cleanup(func() { drop() })
	admin := newHome(t)
	admin.db = dsn + "&pool_max_conns=4"
	admin.must("config", "set", "heartbeat-interval", heartbeat)
	admin.must("config", "set", "lease", lease)
	return &crashHosts{t: t, cluster: cluster, admin: admin, dir: t.TempDir()}
}

// worker starts `worker start --count slots --no-spool` on a new host.
func (c *crashHosts) worker(slots int) *proc {
	c.t.Helper()
	h := newHome(c.t)
	h.db = c.admin.db
	c.n++
	return h.startOnHost(fmt.Sprintf("qcrash-%d-%d", os.Getpid(), c.n),
		"worker", "start", "--count", strconv.Itoa(slots), "--no-spool")
}

// waitStarted waits until worker w says it started (it has opened the
// store and registered), and fails the test if it ended instead.
func (c *crashHosts) waitStarted(w *proc) {
	c.t.Helper()
	waitFor(c.t, 2*time.Minute, "a worker to start", func() bool {
		if ended(w) {
			c.t.Fatalf("worker %v ended before it started: %v\nstderr: %s", w.cmd.Args[1:], w.err, w.stderr)
		}
		return strings.Contains(w.stderr.String(), " started: ")
	})
}

func (c *crashHosts) enqueue(id, body string, args ...string) {
	c.t.Helper()
	c.admin.must(append([]string{"enqueue", "--id", id, "--env", "DIR=" + c.dir, "--command", crashJob(body)}, args...)...)
}

// started reports whether job id has started a run (on any host).
func (c *crashHosts) started(id string) bool {
	runs, _ := readSide(c.t, c.dir)
	return len(runs[id]) > 0
}

// ended reports whether a run of job id has ended.
func (c *crashHosts) ended(id string) bool {
	runs, _ := readSide(c.t, c.dir)
	for _, r := range runs[id] {
		if r.end != 0 {
			return true
		}
	}
	return false
}

// crash crashes the server and starts it again once pause has passed.
func (c *crashHosts) crash(pause time.Duration) {
	c.t.Helper()
	c.cluster.Crash()
	time.Sleep(pause) // the outage itself, not a wait for something
	c.cluster.Start()
}

func (c *crashHosts) stop(workers ...*proc) {
	c.t.Helper()
	var stopped []*proc
	for _, w := range workers {
		if ended(w) {
			// Gone before its stop: say how, and what it said.
			c.t.Errorf("worker %v ended on its own: %v\nstderr: %s", w.cmd.Args[1:], w.err, w.stderr)
			continue
		}
		w.signal(c.t, syscall.SIGTERM)
		stopped = append(stopped, w)
	}
	for _, w := range stopped {
		if code := w.exit(c.t, time.Minute); code != 0 {
			c.t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
		}
	}
}

// TestServerCrashRunsNothingTwice: the server crashes right after a worker
// claimed a job and started it (by Claim; by CompleteAndClaim, as the
// completion of the job before), and comes back; a worker on a second host
// starts. The claim, and the completion before it, survive the crash: the
// second host does not run the job while the first still does, and the
// completed job is not left processing. Then jobs on both hosts live
// through crashes mid-run, one shorter than the lease and one longer.
func TestServerCrashRunsNothingTwice(t *testing.T) {
	t.Parallel() // it mostly waits (leases, outages, a server restarting): see TestMain
	cluster := pgtest.NewCluster(t, crashSettings...)
	t.Run("after a claim", func(t *testing.T) { testCrashAfterClaim(t, cluster, nil) })
	t.Run("after a completion and claim", func(t *testing.T) { testCrashAfterClaim(t, cluster, []string{"before"}) })
	t.Run("mid-run", func(t *testing.T) { testCrashMidRun(t, cluster) })
}

func testCrashAfterClaim(t *testing.T, cluster *pgtest.Cluster, before []string) {
	// A lease far longer than the outage and the server's restart: held's
	// run must go on through them, so each job runs once. A lease of 3 s
	// lapsed on a busy machine (the worker saw the store gone for 2.4 s,
	// a second after its last renewal), and the worker rightly stopped the
	// run to run it again.
	c := newCrashHosts(t, cluster, "1s", "15s")
	for _, id := range before {
		c.enqueue(id, "true", "--priority", "1")
	}
	c.enqueue("held", gated)
	a := c.worker(1)
	waitFor(t, time.Minute, "job held to start on host A", func() bool { return c.started("held") })
	c.crash(time.Second)

	// Host B would take held if the crash had taken its claim back; its
	// second slot runs probe, which comes after held in claim order.
	b := c.worker(2)
	c.enqueue("probe", "true", "--priority", "-1")
	waitFor(t, time.Minute, "job probe to run", func() bool { return c.ended("probe") })
	if err := os.WriteFile(filepath.Join(c.dir, "open"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ids := append(before, "held", "probe")
	c.admin.must(append([]string{"wait", "--timeout", "60s"}, ids...)...)
	total, _ := checkSide(t, c.dir, ids)
	if total != len(ids) {
		runs, _ := readSide(t, c.dir)
		for _, id := range ids {
			for _, r := range runs[id] {
				t.Logf("job %s run %s on %s: %d..%d", id, r.attempt, r.host, r.start, r.end)
			}
		}
		t.Errorf("%d runs of %d jobs, want each once", total, len(ids))
	}
	c.stop(a, b)
	if t.Failed() {
		t.Logf("host A said:\n%s\nhost B said:\n%s", a.stderr, b.stderr)
	}
}

func testCrashMidRun(t *testing.T, cluster *pgtest.Cluster) {
	c := newCrashHosts(t, cluster, "1s", "3s")
	var ids []string
	for i := range 20 {
		id := fmt.Sprintf("mid-%02d", i)
		ids = append(ids, id)
		body := fmt.Sprintf("sleep 0.%d", 2+i%7)
		if i%5 == 0 {
			body = "sleep 4" // longer than the lease: fenced by the long outage
		}
		c.enqueue(id, body)
	}
	a, b := c.worker(2), c.worker(2)
	// Shorter than the lease: the runs go on. Longer: they are stopped
	// when their leases lapse, and run again.
	for _, pause := range []time.Duration{time.Second, 5 * time.Second} {
		waitFor(t, time.Minute, "runs in flight on both hosts", func() bool {
			runs, _ := readSide(t, c.dir)
			busy := map[string]bool{}
			for _, rs := range runs {
				for _, r := range rs {
					if r.end == 0 {
						busy[r.host] = true
					}
				}
			}
			return len(busy) == 2
		})
		c.crash(pause)
	}
	c.admin.must(append([]string{"wait", "--timeout", "2m"}, ids...)...)
	total, stopped := checkSide(t, c.dir, ids)
	t.Logf("%d jobs, %d runs, %d stopped before their end", len(ids), total, stopped)
	c.stop(a, b)
	if t.Failed() {
		t.Logf("host A said:\n%s\nhost B said:\n%s", a.stderr, b.stderr)
	}
}

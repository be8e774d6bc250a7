package cli

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// Tests of a PostgreSQL store that goes away while workers use it: a TCP
// proxy in the test stands between a worker and the shared server, and
// cuts every connection through it (and refuses new ones) while the
// server itself runs on for the other tests.

// tcpProxy forwards connections to target until it is cut.
type tcpProxy struct {
	t      *testing.T
	target string
	ln     net.Listener

	mu      sync.Mutex
	down    bool
	silent  bool // down, but as a network that drops packets: nothing is refused or answered
	conns   map[net.Conn]struct{}
	refused atomic.Int64 // connections refused while down
	// trap, when set, is bytes whose first sight in an answer of the
	// server makes the proxy drop that answer and cut every connection.
	trap    []byte
	trapped atomic.Bool
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{t: t, target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

// via returns dsn with its host and port replaced by the proxy's.
func (p *tcpProxy) via(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		p.t.Fatal(err)
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

func (p *tcpProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down && !p.silent
		if !down {
			p.conns[c] = struct{}{}
		}
		p.mu.Unlock()
		if down {
			// The server is unreachable: the connection is closed before
			// a byte of the startup, as a refused one would be.
			p.refused.Add(1)
			c.Close()
			continue
		}
		go p.forward(c)
	}
}

func (p *tcpProxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[s] = struct{}{}
	p.mu.Unlock()
	go p.relay(s, c, false)
	p.relay(c, s, true)
}

// relay copies src to dst until either fails, dropping what comes while
// the proxy is silent; answers: src is the server.
func (p *tcpProxy) relay(dst, src net.Conn, answers bool) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && answers && p.sprung(buf[:n]) {
			p.cut()
			p.restore()
			return
		}
		if n > 0 && !p.hushed() {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *tcpProxy) hushed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.silent
}

// hush makes the proxy a network that drops every packet: connections
// stay open, new ones are accepted, and nothing goes through, until
// restore closes them all.
func (p *tcpProxy) hush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.silent = true, true
}

// sprung reports whether an answer holds the trap's bytes, disarming it.
func (p *tcpProxy) sprung(answer []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.trap == nil || !bytes.Contains(answer, p.trap) {
		return false
	}
	p.trap = nil
	p.trapped.Store(true)
	return true
}

// setTrap arms the trap (sprung).
func (p *tcpProxy) setTrap(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trap = b
}

// cut closes every proxied connection and refuses new ones until restore.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *tcpProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.silent {
		// What was dropped leaves every connection out of step.
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
	p.down, p.silent = false, false
}

// outageJob is a job command that notes each start in $DIR/$ID.runs and
// its shell's pid in $DIR/$ID.pid, waits for $DIR/open, and notes that it
// got past it in $DIR/$ID.done.
const outageJob = `echo "$QUEUECTL_ATTEMPT" >> "$DIR/$QUEUECTL_JOB_ID.runs"; echo $$ > "$DIR/$QUEUECTL_JOB_ID.pid"
while [ ! -e "$DIR/open" ]; do sleep 0.05; done
echo "$QUEUECTL_ATTEMPT" >> "$DIR/$QUEUECTL_JOB_ID.done"`

// openGate lets the outageJobs of dir past their gate.
func openGate(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "open"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// pidIn reads the pid a job wrote, 0 if none yet.
func pidIn(path string) int {
	data, _ := os.ReadFile(path)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// faultSetup is outageSetup for a fault of the server itself: a cluster
// of the test's own, a schema on it (dsn), a home for the admin and one
// for a worker on that schema, heartbeats every second, and a directory
// for the jobs' files.
func faultSetup(t *testing.T) (cluster *pgtest.Cluster, dsn string, admin, worker *qhome, dir string) {
	cluster = pgtest.NewCluster(t)
	dsn, drop, err := pgtest.NewSchema(cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	admin = newHome(t)
	admin.db = dsn + "&pool_max_conns=4"
	admin.must("config", "set", "heartbeat-interval", "1s")
	worker = newHome(t)
	worker.db = admin.db
	return cluster, dsn, admin, worker, t.TempDir()
}

// outageSetup is a PostgreSQL home for the admin (direct to the server)
// and a home for a worker that reaches the same store through a proxy.
func outageSetup(t *testing.T, heartbeat, lease string) (admin, worker *qhome, proxy *tcpProxy, dir string) {
	admin = newPostgresHome(t)
	u, err := url.Parse(admin.db)
	if err != nil {
		t.Fatal(err)
	}
	proxy = newTCPProxy(t, u.Host)
	worker = newHome(t)
	worker.db = proxy.via(admin.db)
	admin.must("config", "set", "heartbeat-interval", heartbeat)
	admin.must("config", "set", "lease", lease)
	return admin, worker, proxy, t.TempDir()
}

func (h *qhome) enqueueOutageJob(dir, id string) {
	h.t.Helper()
	h.must("enqueue", "--id", id, "--env", "DIR="+dir, "--command", outageJob)
}

// runsOf returns a job's runs as the store has them.
func runsOf(t *testing.T, h *qhome, id string) []claim.Run {
	t.Helper()
	s, err := claim.Open(h.location())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestStoreOutage: the server goes away while a worker runs jobs, and
// comes back before the lease lapses. The jobs go on (their processes are
// not killed) and end during the outage; the worker says once that the
// store is unreachable, claims nothing and does not spin, and once it is
// back it records each result exactly once, says so, and claims again.
func TestStoreOutage(t *testing.T) {
	t.Parallel() // it mostly waits (leases, outages, a server restarting): see TestMain
	admin, worker, proxy, dir := outageSetup(t, "1s", "30s")
	admin.enqueueOutageJob(dir, "a")
	admin.enqueueOutageJob(dir, "b")
	w := worker.start("worker", "start", "--count", "2")
	for _, id := range []string{"a", "b"} {
		waitFor(t, time.Minute, "job "+id+" to start", func() bool { return pidIn(filepath.Join(dir, id+".pid")) > 0 })
	}

	proxy.cut()
	cutAt := time.Now()
	waitFor(t, 30*time.Second, "the worker to say the store is unreachable", func() bool {
		return strings.Contains(w.stderr.String(), "store unreachable")
	})
	// The jobs end while the store is away: their ends wait to be recorded.
	openGate(t, dir)
	for _, id := range []string{"a", "b"} {
		waitFor(t, 30*time.Second, "job "+id+" to get past its gate", func() bool {
			_, err := os.Stat(filepath.Join(dir, id+".done"))
			return err == nil
		})
	}
	// An outage of a few seconds more, while the worker has results to
	// record and slots free to claim: it must wait, not spin.
	admin.enqueueOutageJob(dir, "c")
	// A job dropped in the worker's spool waits there.
	spec := fmt.Sprintf(`{"id": "d", "command": %q, "env": {"DIR": %q}}`, outageJob, dir)
	writeFile(t, filepath.Join(worker.dir, "spool", "d.json"), []byte(spec))
	refusedBefore := proxy.refused.Load()
	stderrBefore := strings.Count(w.stderr.String(), "\n")
	hold := time.NewTimer(4 * time.Second)
	select {
	case <-hold.C:
	case <-w.done:
		t.Fatalf("the worker exited during the outage: %v\nstderr: %s", w.err, w.stderr)
	}
	attempts := float64(proxy.refused.Load()-refusedBefore) / 4
	said := strings.Count(w.stderr.String(), "\n") - stderrBefore
	if j := admin.show("c"); j.State != "pending" {
		t.Errorf("job c is %s during the outage, want pending", j.State)
	}
	if _, err := os.Stat(filepath.Join(worker.dir, "rejected", "d.json")); err == nil {
		t.Error("the spool file dropped during the outage was rejected; want it kept for the store's return")
	}
	proxy.restore()
	t.Logf("outage of %v; %.1f connection attempts a second while it lasted, %d lines said in its last 4 s",
		time.Since(cutAt).Round(100*time.Millisecond), attempts, said)
	// The heartbeat, the reaper, the listener, the slots, the fence, the
	// schedules, the spool, the pauses and the slot count each try at their
	// own pace, about once a second or slower (18–21 a second in all, on a
	// 2-core machine); a loop without a pause would make thousands of
	// attempts a second.
	if attempts > 30 {
		t.Errorf("%.1f connection attempts a second during the outage; the worker spins", attempts)
	}
	if said > 2 {
		t.Errorf("the worker said %d lines in 4 s of an outage it had already reported:\n%s", said, w.stderr)
	}

	waitFor(t, time.Minute, "the spool file to be ingested", func() bool {
		_, _, code := admin.run("show", "d")
		return code == 0
	})
	admin.must("wait", "a", "b", "c", "d", "--timeout", "60s")
	t.Logf("the worker said:\n%s", w.stderr)
	for _, id := range []string{"a", "b", "c", "d"} {
		runs := runsOf(t, admin, id)
		if len(runs) != 1 || runs[0].Outcome != claim.OutcomeCompleted {
			t.Errorf("job %s: runs %+v, want one, completed", id, runs)
		}
		if got := lines(t, filepath.Join(dir, id+".runs")); len(got) != 1 || got["1"] != 1 {
			t.Errorf("job %s started %v (attempt: times), want once", id, got)
		}
	}
	// The return is said once the store has answered for a while
	// (run.Reach.Settle); a stumble before then is the same outage.
	waitFor(t, time.Minute, "the worker to say the store is back", func() bool {
		return strings.Contains(w.stderr.String(), "store reachable again")
	})
	text := w.stderr.String()
	for _, want := range []string{"store unreachable", "store reachable again"} {
		if n := strings.Count(text, want); n != 1 {
			t.Errorf("the worker said %q %d times, want once\nstderr: %s", want, n, text)
		}
	}
	if strings.Contains(text, "dropped") || strings.Contains(text, "lost") {
		t.Errorf("the worker dropped or lost a run:\n%s", text)
	}
	// Said once: not again by the spool's watcher or the schedules (a line
	// of their own; the one report may name a schedules read, when it was
	// the first to meet the outage).
	for _, again := range []*regexp.Regexp{regexp.MustCompile(`(?m)^queuectl: schedules: `), regexp.MustCompile(`the spool's files wait`)} {
		if again.MatchString(text) {
			t.Errorf("the worker said the outage again (%v):\n%s", again, text)
		}
	}
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

// TestStoreOutageOutlastsLease: the server stays away from one host
// longer than the lease, and a worker on another host, which still reaches
// it, takes that host's runs for lost 4 s after the lease and runs their
// jobs again. The cut-off worker stops its running job when its lease
// lapses unrenewed (before the other host may start it), keeps a job that
// ended meanwhile from recording its stale result once the store is back
// (the other host's run stands), and claims again. Each job completes
// once, without using up an attempt for the lost run.
// The server goes away in two ways: it refuses (connections reset, new
// ones refused), or it is silent (a network that drops packets: every
// call hangs, and the heartbeat's renewal gives up in time for the fence).
func TestStoreOutageOutlastsLease(t *testing.T) {
	t.Parallel() // it mostly waits (leases, outages, a server restarting): see TestMain
	t.Run("refused", func(t *testing.T) { testOutageOutlastsLease(t, false) })
	t.Run("silent", func(t *testing.T) { testOutageOutlastsLease(t, true) })
}

func testOutageOutlastsLease(t *testing.T, silent bool) {
	admin, worker, proxy, _ := outageSetup(t, "1s", "3s")
	long, quick := t.TempDir(), t.TempDir()
	admin.enqueueOutageJob(long, "long")
	admin.enqueueOutageJob(quick, "quick")
	w := worker.start("worker", "start", "--count", "2", "--no-spool")
	waitFor(t, time.Minute, "both jobs to start", func() bool {
		return pidIn(filepath.Join(long, "long.pid")) > 0 && pidIn(filepath.Join(quick, "quick.pid")) > 0
	})
	first := pidIn(filepath.Join(long, "long.pid"))

	if silent {
		proxy.hush()
	} else {
		proxy.cut()
	}
	cutAt := time.Now()
	// quick ends during the outage: its result waits to be recorded.
	openGate(t, quick)
	waitFor(t, 30*time.Second, "quick's first run to end", func() bool { return lines(t, filepath.Join(quick, "quick.done"))["1"] == 1 })
	waitFor(t, time.Minute, "the worker to stop the run whose lease lapsed", func() bool {
		return strings.Contains(w.stderr.String(), "lapsed")
	})
	waitFor(t, 30*time.Second, "the run's process to be gone", func() bool { return !groupAlive(first) })
	t.Logf("run stopped %v after the cut (lease 3s; another host may recover it after 8s)",
		time.Since(cutAt).Round(100*time.Millisecond))
	if lines(t, filepath.Join(long, "long.done"))["1"] != 0 {
		t.Fatal("long's first run got past its gate, which was never opened")
	}
	openGate(t, long)

	// Another host, which reaches the server, recovers both runs after the
	// lease and its grace, and runs the jobs again.
	other := newHome(t)
	other.db = admin.db
	b := other.startOnHost(fmt.Sprintf("qother-%d", os.Getpid()), "worker", "start", "--count", "2", "--no-spool")
	admin.must("wait", "long", "quick", "--timeout", "60s")
	proxy.restore()
	waitFor(t, 30*time.Second, "the cut-off worker to be back and drop quick's stale result", func() bool {
		text := w.stderr.String()
		return strings.Contains(text, "store reachable again") && strings.Contains(text, "job quick: run 1 was recovered")
	})
	// Alone again, it claims again.
	b.signal(t, syscall.SIGTERM)
	if code := b.exit(t, time.Minute); code != 0 {
		t.Errorf("the other host's worker exit %d after SIGTERM\nstderr: %s", code, b.stderr)
	}
	after := t.TempDir()
	openGate(t, after)
	admin.enqueueOutageJob(after, "after")
	admin.must("wait", "after", "--timeout", "60s")

	for _, id := range []string{"long", "quick"} {
		runs := runsOf(t, admin, id)
		if len(runs) != 2 || runs[0].Outcome != claim.OutcomeLost || runs[1].Outcome != claim.OutcomeCompleted ||
			!strings.HasPrefix(runs[1].Host, "qother-") {
			t.Errorf("runs of job %s %+v, want run 1 lost and run 2 completed on the other host", id, runs)
		}
		if j := admin.show(id); j.Attempts != 1 || j.State != "completed" {
			t.Errorf("job %s %s after %d attempts, want completed after 1: a lost run is not an attempt", id, j.State, j.Attempts)
		}
	}
	if got := lines(t, filepath.Join(long, "long.done")); len(got) != 1 || got["2"] != 1 {
		t.Errorf("long's runs that got past the gate: %v, want run 2 only", got)
	}
	text := w.stderr.String()
	for _, want := range []string{"store unreachable", "lapsed", "store reachable again"} {
		if !strings.Contains(text, want) {
			t.Errorf("the worker did not say %q\nstderr: %s", want, text)
		}
	}
	t.Logf("the cut-off worker said:\n%s", text)
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

// TestClaimAnswerLost: the connection is lost after the server committed a
// worker's claim and before its answer arrived. The worker does not know
// it holds the job, and its heartbeat would renew the lease for as long as
// it runs; its reaper finds the run no slot holds, recovers it as lost,
// and the job runs, once.
func TestClaimAnswerLost(t *testing.T) {
	admin, worker, proxy, dir := outageSetup(t, "1s", "30s")
	w := worker.start("worker", "start", "--count", "1", "--no-spool")
	waitFor(t, time.Minute, "the worker to start", func() bool { return strings.Contains(w.stderr.String(), "started:") })
	id := fmt.Sprintf("unseen-%d", time.Now().UnixNano())
	proxy.setTrap([]byte(id))
	admin.must("enqueue", "--id", id, "--env", "DIR="+dir, "--command", `echo "$QUEUECTL_ATTEMPT" >> "$DIR/runs"`)
	waitFor(t, time.Minute, "the claim's answer to be cut off", proxy.trapped.Load)
	admin.must("wait", id, "--timeout", "60s")
	runs := runsOf(t, admin, id)
	if len(runs) != 2 || runs[0].Outcome != claim.OutcomeLost || runs[1].Outcome != claim.OutcomeCompleted {
		t.Errorf("runs %+v, want run 1 (claimed unseen) lost and run 2 completed", runs)
	}
	if got := lines(t, filepath.Join(dir, "runs")); len(got) != 1 || got["2"] != 1 {
		t.Errorf("the job ran as %v (attempt: times), want run 2 once", got)
	}
	if j := admin.show(id); j.Attempts != 1 {
		t.Errorf("job attempts %d, want 1: a run lost unseen is not an attempt", j.Attempts)
	}
	t.Logf("the worker said:\n%s", w.stderr)
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

// TestCommandsAgainstUnreachableServer: every command that needs the store
// says what is wrong and how to fix it, and exits 1: a server that went
// away, a port where none listens, a role the server refuses, a database
// that does not exist; and 2 for a URL that is not one (invalid input).
// A follower (wait, logs -f, run) that starts so fails at once too, as
// worker start does: it has nothing to follow yet, and a store it never
// reached may be a mistake in --db. Only an outage that begins while it
// follows is ridden out (TestFollowersRideOutOutage).
func TestCommandsAgainstUnreachableServer(t *testing.T) {
	admin := newPostgresHome(t)
	admin.must("status") // the schema exists
	u, err := url.Parse(admin.db)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, u.Host)
	proxy.cut()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	noPort := closed.Addr().String()
	closed.Close()
	withHost := func(host string) string {
		v := *u
		v.Host = host
		return v.String()
	}
	withUser := func(user string) string {
		v := *u
		v.User = url.UserPassword(user, "s3cret-word")
		return v.String()
	}
	withDB := func(db string) string {
		v := *u
		v.Path = "/" + db
		return v.String()
	}
	cases := []struct {
		name, db, want, hint string
		code                 int
	}{
		{"server gone", proxy.via(admin.db), "database unavailable", "server is running and reachable", 1},
		{"nothing on the port", withHost(noPort), noPort, "server is running and reachable", 1},
		{"no such role", withUser("queuectl_no_such_role"), "queuectl_no_such_role", "refused the user", 1},
		{"no such database", withDB("queuectl_no_such_db"), "queuectl_no_such_db", "create the database", 1},
		{"not a URL", "postgres://%zz", "is not a PostgreSQL URL", "postgres://USER:PASSWORD@HOST", 2},
	}
	for _, tc := range cases {
		h := newHome(t)
		h.db = tc.db
		for _, args := range [][]string{{"status"}, {"list"}, {"enqueue", "--command", "true"}, {"worker", "start", "--no-spool"},
			{"wait", "nojob", "--timeout", "30s"}, {"logs", "-f", "nojob"}, {"run", "--", "true"}} {
			out, errText, code := h.run(args...)
			what := tc.name + ": queuectl " + strings.Join(args, " ")
			if code != tc.code || out != "" {
				t.Errorf("%s: exit %d, stdout %q; want %d and nothing\nstderr: %s", what, code, out, tc.code, errText)
			}
			if !strings.Contains(errText, "queuectl: error: ") || !strings.Contains(errText, tc.want) ||
				!strings.Contains(errText, "queuectl: hint: ") || !strings.Contains(errText, tc.hint) {
				t.Errorf("%s: stderr %q; want an error naming %q and a hint saying %q", what, errText, tc.want, tc.hint)
			}
			if strings.Contains(errText, "s3cret-word") {
				t.Errorf("%s: stderr shows a password: %q", what, errText)
			}
		}
	}
}

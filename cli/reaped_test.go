package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// workersOf returns the registry of h's store.
func workersOf(t *testing.T, h *qhome) []claim.WorkerInfo {
	t.Helper()
	s, err := claim.Open(h.location())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws, err := s.Workers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// workerOf is the registered worker with pid.
func workerOf(t *testing.T, h *qhome, pid int) claim.WorkerInfo {
	t.Helper()
	for _, w := range workersOf(t, h) {
		if w.PID == pid {
			return w
		}
	}
	t.Fatalf("no worker of pid %d registered", pid)
	return claim.WorkerInfo{}
}

// TestReapedWorkerRegistersAgain: a worker on another host is cut off from
// the server for longer than its lease, and a worker that still reaches it
// takes it for dead: it removes its registry row, recovers its run and
// runs the job again. Once the cut-off worker is back, it registers again
// (and says so, once), so that status counts it and `worker stop` stops
// it; its registration gives it no claim back (the job's run stays the
// other worker's, and the job runs to its end once, there).
func TestReapedWorkerRegistersAgain(t *testing.T) {
	t.Parallel() // it mostly waits (leases, outages, a server restarting): see TestMain
	admin, cutOff, proxy, dir := outageSetup(t, "1s", "3s")
	admin.enqueueOutageJob(dir, "j")
	a := cutOff.startOnHost(fmt.Sprintf("qreaped-%d", os.Getpid()), "worker", "start", "--count", "1", "--no-spool")
	waitFor(t, time.Minute, "job j to start on the cut-off worker", func() bool { return pidIn(filepath.Join(dir, "j.pid")) > 0 })
	first := pidIn(filepath.Join(dir, "j.pid"))
	b := admin.start("worker", "start", "--count", "1", "--no-spool")
	waitFor(t, time.Minute, "both workers to register", func() bool { return len(workersOf(t, admin)) == 2 })
	var aID string
	for _, w := range workersOf(t, admin) {
		if strings.HasPrefix(w.Host, "qreaped-") {
			aID = w.ID
		}
	}

	proxy.cut()
	// The other worker takes the cut-off one for dead after its lease and
	// the grace for another host's clock: it removes its row, and runs j
	// again.
	waitReport(t, time.Minute, "the cut-off worker's row to be reaped and j to run again", func() bool {
		ws := workersOf(t, admin)
		return len(ws) == 1 && ws[0].ID != aID && lines(t, filepath.Join(dir, "j.runs"))["2"] == 1
	}, func() string { return fmt.Sprintf("workers %+v\ncut-off worker:\n%s", workersOf(t, admin), a.stderr) })
	if groupAlive(first) {
		t.Errorf("j's first run (process group %d) still runs on the cut-off worker after its lease lapsed", first)
	}

	proxy.restore()
	waitReport(t, time.Minute, "the cut-off worker to register again", func() bool {
		return len(workersOf(t, admin)) == 2
	}, func() string { return fmt.Sprintf("workers %+v\ncut-off worker:\n%s", workersOf(t, admin), a.stderr) })
	if out := admin.must("status"); !strings.Contains(out, "  workers: 2\n") {
		t.Errorf("status after the cut-off worker is back:\n%s\nwant 2 workers", out)
	}
	s, err := claim.Open(admin.location())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if j, err := s.Get(t.Context(), "j"); err != nil || j.WorkerID == aID || j.State != claim.Processing || j.Runs != 2 {
		t.Errorf("job j once the cut-off worker is back: %+v, %v; want run 2 processing, not the cut-off worker's", j, err)
	}

	openGate(t, dir)
	admin.must("wait", "j", "--timeout", "60s")
	runs := runsOf(t, admin, "j")
	if len(runs) != 2 || runs[0].Outcome != claim.OutcomeLost || runs[1].Outcome != claim.OutcomeCompleted || runs[1].WorkerID == aID {
		t.Errorf("runs of j %+v, want run 1 lost and run 2 completed by the other worker", runs)
	}
	if got := lines(t, filepath.Join(dir, "j.done")); len(got) != 1 || got["2"] != 1 {
		t.Errorf("j's runs that got past the gate: %v, want run 2 only", got)
	}

	if _, errText, code := admin.run("worker", "stop", "--wait", "--timeout", "60s"); code != 0 || !strings.Contains(errText, "asked 2 worker(s)") {
		t.Errorf("worker stop --wait: exit %d, stderr %q; want both workers asked", code, errText)
	}
	for _, p := range []*proc{a, b} {
		if code := p.exit(t, time.Minute); code != 0 {
			t.Errorf("worker exit %d after worker stop\nstderr: %s", code, p.stderr)
		}
	}
	t.Logf("the cut-off worker said:\n%s", a.stderr)
	if n := strings.Count(a.stderr.String(), "registered again"); n != 1 {
		t.Errorf("the cut-off worker said %d times that it registered again, want once\nstderr: %s", n, a.stderr)
	}
}

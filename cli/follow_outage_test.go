package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFollowersRideOutOutage: the server goes away from `run`, `wait` and
// `logs -f` (a proxy between them and the server cuts every connection and
// refuses new ones) while the jobs they follow run on, on a worker that
// still reaches it. Each says once that the store is unreachable, keeps
// trying, says once that it is back, and then ends as it would have: run
// with its job's own exit code, wait and logs -f with 0 for a job that
// completed; the output of run and logs -f is whole.
func TestFollowersRideOutOutage(t *testing.T) {
	t.Parallel() // it mostly waits (leases, outages, a server restarting): see TestMain
	admin, follower, proxy, dir := outageSetup(t, "1s", "30s")
	job := func(end string) string {
		return `echo "before $QUEUECTL_JOB_ID"; ` + outageJob + `
echo "after $QUEUECTL_JOB_ID"; ` + end
	}
	w := admin.start("worker", "start", "--count", "2", "--queue", "default", "--no-spool")

	// run's job fails with 3: run must exit 3, not 1 for the outage.
	r := follower.start("run", "--id", "r", "--env", "DIR="+dir, "--shell", job("exit 3"))
	admin.must("enqueue", "--id", "l", "--env", "DIR="+dir, "--command", job("true"))
	l := follower.start("logs", "-f", "l")
	// wait's job is in a queue no worker serves yet: wait says so at its
	// first look, which shows that it waits.
	admin.must("enqueue", "--id", "w", "--queue", "wq", "--env", "DIR="+dir, "--command", job("true"))
	wt := follower.start("wait", "w")
	waitFor(t, time.Minute, "wait to look at its job", func() bool {
		return strings.Contains(wt.stderr.String(), "no live worker serves queue wq")
	})
	w2 := admin.start("worker", "start", "--count", "1", "--queue", "wq", "--no-spool")
	followers := map[string]*proc{"run": r, "logs -f": l, "wait": wt}
	waitReport(t, time.Minute, "the jobs to start and run and logs -f to follow them", func() bool {
		return pidIn(filepath.Join(dir, "r.pid")) > 0 && pidIn(filepath.Join(dir, "l.pid")) > 0 && pidIn(filepath.Join(dir, "w.pid")) > 0 &&
			strings.Contains(r.stdout.String(), "before r") && strings.Contains(l.stdout.String(), "before l")
	}, func() string { return saidBy(followers) })

	proxy.cut()
	waitReport(t, time.Minute, "each follower to say that the store is unreachable", func() bool {
		said := 0
		for name, p := range followers {
			if ended(p) {
				t.Fatalf("%s ended during the outage: %v\nstderr: %s", name, p.err, p.stderr)
			}
			if strings.Contains(p.stderr.String(), "store unreachable") {
				said++
			}
		}
		return said == len(followers)
	}, func() string { return saidBy(followers) })
	// The jobs end while the followers cannot see it.
	openGate(t, dir)
	if _, errText, code := admin.run("wait", "r", "l", "w", "--timeout", "60s"); code != 1 {
		t.Fatalf("wait for the jobs, from a home that reaches the server: exit %d, want 1 (r is dead)\nstderr: %s", code, errText)
	}
	for name, p := range followers {
		if ended(p) {
			t.Fatalf("%s ended during the outage: %v\nstderr: %s", name, p.err, p.stderr)
		}
	}

	proxy.restore()
	for name, want := range map[string]int{"run": 3, "logs -f": 0, "wait": 0} {
		p := followers[name]
		if code := p.exit(t, time.Minute); code != want {
			t.Errorf("%s exit %d once the store is back, want %d\nstderr: %s", name, code, want, p.stderr)
		}
		for _, said := range []string{"store unreachable", "store reachable again"} {
			if n := strings.Count(p.stderr.String(), said); n != 1 {
				t.Errorf("%s said %q %d times, want once\nstderr: %s", name, said, n, p.stderr)
			}
		}
	}
	for name, p := range map[string]*proc{"run": r, "logs -f": l} {
		id := name[:1]
		if out := p.stdout.String(); out != fmt.Sprintf("before %s\nafter %s\n", id, id) {
			t.Errorf("%s's stdout %q, want the job's whole output", name, out)
		}
	}
	t.Logf("%s", saidBy(followers))
	for _, p := range []*proc{w, w2} {
		p.signal(t, syscall.SIGTERM)
		if code := p.exit(t, time.Minute); code != 0 {
			t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, p.stderr)
		}
	}
}

// saidBy is what each of procs said on stderr.
func saidBy(procs map[string]*proc) string {
	var b strings.Builder
	for name, p := range procs {
		fmt.Fprintf(&b, "\n%s said:\n%s", name, p.stderr)
	}
	return b.String()
}

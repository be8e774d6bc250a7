package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// maxConcurrent replays a file of "+ ID" and "- ID" lines, which jobs
// append as they start and end, and returns how many ran at once at most
// per group of IDs. A job writes "+" after it started and "-" before it
// ends, so this is at most what really ran.
func maxConcurrent(t *testing.T, path string, group func(id string) string) map[string]int {
	t.Helper()
	running, most := map[string]int{}, map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		sign, id, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("line %q in %s", line, path)
		}
		g := group(id)
		switch sign {
		case "+":
			running[g]++
		case "-":
			running[g]--
		default:
			continue // another kind of line, such as a make target's start
		}
		most[g] = max(most[g], running[g])
	}
	return most
}

// awaitStarts is shell code for a job that has written its "+ ID" line to
// log: it waits until n lines there start with prefix, so that n such jobs
// certainly ran at once, for at most a minute (then the test's assertions
// on the log say what went wrong).
func awaitStarts(log, prefix string, n int) string {
	return fmt.Sprintf(`i=0; while [ "$(grep -c '^%s' %s)" -lt %d ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done`, prefix, log, n)
}

// byQueue groups ids queue-n by queue.
func byQueue(id string) string {
	queue, _, _ := strings.Cut(id, "-")
	return queue
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestQueueLimitAcrossProcesses: three worker processes of 4 slots each
// share a home where queue heavy is limited to 2. Sampled from the jobs
// themselves, never more than 2 heavy jobs run at once, while the
// unlimited queue beside it fills the other slots. The first jobs of each
// queue wait for each other (2 heavy, 3 light), so the limit is certainly
// reached and the light queue certainly goes past it.
func TestQueueLimitAcrossProcesses(t *testing.T) {
	const limit, heavy, light = 2, 24, 24
	h := newHome(t)
	h.must("queue", "set", "heavy", "--max-running", fmt.Sprint(limit))
	log := filepath.Join(t.TempDir(), "events")
	job := func(id string) string {
		queue := byQueue(id)
		gate := awaitStarts(log, "+ "+queue, map[string]int{"heavy": limit, "light": limit + 1}[queue])
		return fmt.Sprintf("echo '+ %s' >> %s; %s; echo '- %s' >> %s", id, log, gate, id, log)
	}
	var specs strings.Builder
	for i := range max(heavy, light) {
		if i < heavy {
			fmt.Fprintf(&specs, `{"id": "heavy-%d", "queue": "heavy", "command": %q}`+"\n", i, job(fmt.Sprintf("heavy-%d", i)))
		}
		if i < light {
			fmt.Fprintf(&specs, `{"id": "light-%d", "command": %q}`+"\n", i, job(fmt.Sprintf("light-%d", i)))
		}
	}
	enqueue := h.command("enqueue", "-")
	enqueue.Stdin = strings.NewReader(specs.String())
	if out, err := enqueue.CombinedOutput(); err != nil {
		t.Fatalf("enqueue -: %v\n%s", err, out)
	}
	for range 3 {
		h.start("worker", "start", "--count", "4", "--no-spool")
	}
	ids := make([]string, 0, heavy+light)
	for i := range heavy {
		ids = append(ids, fmt.Sprintf("heavy-%d", i))
	}
	for i := range light {
		ids = append(ids, fmt.Sprintf("light-%d", i))
	}
	h.must(append([]string{"wait"}, ids...)...)
	most := maxConcurrent(t, log, byQueue)
	if most["heavy"] > limit {
		t.Errorf("%d heavy jobs ran at once, limit %d", most["heavy"], limit)
	}
	if most["heavy"] < limit {
		t.Errorf("at most %d heavy jobs ran at once: the limit %d was never reached, so the test showed nothing", most["heavy"], limit)
	}
	if most["light"] <= limit {
		t.Errorf("at most %d unlimited jobs ran at once on 12 slots: held back by heavy's limit?", most["light"])
	}
	t.Logf("most running at once: heavy %d (limit %d), light %d (no limit, 12 slots)", most["heavy"], limit, most["light"])
}

// TestQueueLimitLostRunFreesItsSlot: a worker killed with SIGKILL while it
// runs the one job its queue may run holds the slot only until another
// worker recovers the run; then the queue runs again.
func TestQueueLimitLostRunFreesItsSlot(t *testing.T) {
	h := newHome(t)
	h.must("queue", "set", "heavy", "--max-running", "1")
	g := newGate(t)
	h.must("enqueue", "--id", "held", "--queue", "heavy", "--command", g.command())
	h.must("enqueue", "--id", "next", "--queue", "heavy", "--command", "true")
	doomed := h.start("worker", "start", "--no-spool", "--count", "2")
	g.waitStarted(t)
	doomed.signal(t, syscall.SIGKILL)
	doomed.exit(t, 30*time.Second)

	// Both heavy jobs need the one slot: the lost run's job again, and next.
	os.Remove(g.started)
	h.start("worker", "start", "--no-spool", "--count", "2")
	g.waitStarted(t)
	g.release(t)
	h.must("wait", "held", "next")
	if j := h.show("held"); len(j.Runs) != 2 || j.Runs[0].Outcome != "lost" {
		t.Errorf("held ran %d times (first %+v), want a lost run and a second", len(j.Runs), j.Runs)
	}
}

package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// flowJob is what the workflow chaos tests read of `list --json`.
type flowJob struct {
	ID        string `json:"id"`
	State     string `json:"state"`
	Lost      int    `json:"lost"`
	LastError string `json:"last_error"`
}

// jobEnv returns job id's env: its values, which only show --env prints.
func (h *qhome) jobEnv(id string) map[string]string {
	h.t.Helper()
	var j struct {
		Env map[string]string `json:"env"`
	}
	if err := json.Unmarshal([]byte(h.must("show", "--env", "--json", id)), &j); err != nil {
		h.t.Fatalf("show --env --json %s: %v", id, err)
	}
	return j.Env
}

func (h *qhome) flowJobs() []flowJob {
	h.t.Helper()
	var jobs []flowJob
	if err := json.Unmarshal([]byte(h.must("list", "--json")), &jobs); err != nil {
		h.t.Fatalf("list --json: %v", err)
	}
	return jobs
}

// deadOfLosses reports whether j is dead because kills took its run
// MaxLost times (SPEC §3), and it did lose that many.
func (j flowJob) deadOfLosses() bool {
	return j.State == "dead" && j.LastError == fmt.Sprintf("worker lost %d times", claim.MaxLost) && j.Lost >= claim.MaxLost
}

// deadDependency reports whether reason says a job ended dead because a
// dependency in jobs did, and that dependency is dead.
func deadDependency(jobs map[string]flowJob, reason string) bool {
	rest, ok := strings.CutPrefix(reason, "dependency ")
	if !ok {
		return false
	}
	id, _, ok := strings.Cut(rest, " died: ")
	return ok && jobs[id].State == "dead"
}

// killWorkers SIGKILLs a random one of ws and starts a new one in its place,
// every 100–500 ms, for d: workers die between firing a schedule, claiming
// its job and finishing it.
func killWorkers(t *testing.T, h *qhome, ws []*proc, d time.Duration, seed uint64) (kills int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed|1))
	for end := time.Now().Add(d); time.Now().Before(end); {
		<-time.After(time.Duration(100+rng.IntN(400)) * time.Millisecond) // the chaos's pace, not a wait for work
		i := rng.IntN(len(ws))
		ws[i].cmd.Process.Signal(syscall.SIGKILL)
		<-ws[i].done
		kills++
		ws[i] = h.start("worker", "start", "--count", "2", "--no-spool")
	}
	return kills
}

// TestChaosSchedule fires a schedule every second from 3 worker processes
// while they are SIGKILLed at random: each due time becomes at most one job
// (never two), the due times that fired are in order without repeats, and
// every job the schedule made completes once the chaos ends (or is dead
// after a kill took its run MaxLost times).
func TestChaosSchedule(t *testing.T) {
	h := newHome(t)
	for _, kv := range [][2]string{{"heartbeat-interval", "200ms"}, {"poll-interval", "100ms"}} {
		h.must("config", "set", kv[0], kv[1])
	}
	out := filepath.Join(t.TempDir(), "out")
	h.must("schedule", "add", "tick", "--cron", "@every 1s", "--max-retries", "10",
		"--command", `echo "$QUEUECTL_DUE" >> `+out+`; sleep 0.2`)
	ws := []*proc{
		h.start("worker", "start", "--count", "2", "--no-spool"),
		h.start("worker", "start", "--count", "2", "--no-spool"),
		h.start("worker", "start", "--count", "2", "--no-spool"),
	}
	seed := uint64(time.Now().UnixNano())
	kills := killWorkers(t, h, ws, 8*time.Second, seed)
	// The workers killWorkers leaves running go on until three due times
	// have fired: a loaded machine may have fired fewer in the kill window.
	waitFor(t, 2*time.Minute, "3 jobs of a schedule due every second", func() bool { return len(h.flowJobs()) >= 3 })
	h.must("schedule", "pause", "tick")

	jobs := h.flowJobs()
	ids := make([]string, 0, len(jobs))
	due := map[string]string{}
	dues := map[string]string{}
	for _, j := range jobs {
		dues[j.ID] = h.jobEnv(j.ID)["QUEUECTL_DUE"]
		if d := dues[j.ID]; d == "" || due[d] != "" {
			t.Errorf("job %s: due time %q is empty or also job %s's", j.ID, d, due[d])
		} else {
			due[d] = j.ID
		}
		ids = append(ids, j.ID)
	}
	// The surviving workers recover what the killed ones held. A job whose
	// run a kill took MaxLost times is dead (SPEC §3), and did not run.
	h.run(append([]string{"wait", "--timeout", "2m"}, ids...)...)
	for _, j := range h.flowJobs() {
		switch {
		case j.State == "completed":
		case j.deadOfLosses():
			t.Logf("%s dead after %d lost runs (seed %d)", j.ID, j.Lost, seed)
			delete(due, dues[j.ID])
		default:
			t.Errorf("job %s is %s (%q, lost %d), want completed (seed %d, %d kills)", j.ID, j.State, j.LastError, j.Lost, seed, kills)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]bool{}
	for _, line := range strings.Fields(string(data)) {
		ran[line] = true
	}
	for d, id := range due {
		if !ran[d] {
			t.Errorf("job %s (due %s) completed without running its command", id, d)
		}
	}
	t.Logf("schedule chaos: %d jobs, %d worker kills, seed %d", len(jobs), kills, seed)
}

// TestChaosDependencyChain runs chains of jobs (each step after the one
// before, and a last step after every chain's end) from 3 worker processes
// while they are SIGKILLed at random: every step runs only after the step
// it waits for completed, every job completes (or, when a kill took a
// step's run MaxLost times, that step is dead and what follows it too), and
// a chain whose first step dies takes every later step with it, each
// naming the step before.
func TestChaosDependencyChain(t *testing.T) {
	h := newHome(t)
	for _, kv := range [][2]string{{"heartbeat-interval", "200ms"}, {"poll-interval", "100ms"}, {"max-retries", "10"}} {
		h.must("config", "set", kv[0], kv[1])
	}
	dir := t.TempDir()
	const chains, steps = 6, 5
	var batch strings.Builder
	var lasts []string
	for c := range chains {
		for s := range steps {
			id := fmt.Sprintf("c%d-s%d", c, s)
			// Each step checks that the step before left its mark, then
			// leaves its own; the sleep gives the kills a running job.
			check := "true"
			var after []string
			if s > 0 {
				prev := fmt.Sprintf("c%d-s%d", c, s-1)
				check = "{ test -e " + filepath.Join(dir, prev) + " || echo " + id + " >> " + filepath.Join(dir, "early") + "; }"
				after = []string{prev}
			}
			spec := map[string]any{"id": id, "command": check + " && sleep 0.2 && touch " + filepath.Join(dir, id), "after": after}
			b, _ := json.Marshal(spec)
			batch.Write(append(b, '\n'))
		}
		lasts = append(lasts, fmt.Sprintf("c%d-s%d", c, steps-1))
	}
	join, _ := json.Marshal(map[string]any{"id": "join", "command": "true", "after": lasts})
	batch.Write(join)
	// The batch lists the join last but may list it anywhere: enqueue -
	// orders a batch by its after.
	cmd := h.command("enqueue", "-q", "-")
	cmd.Stdin = strings.NewReader(batch.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("enqueue -: %v\n%s", err, out)
	}
	// A chain whose first step dies.
	h.must("enqueue", "--id", "doomed-0", "--max-retries", "1", "--command", "exit 3")
	h.must("enqueue", "--id", "doomed-1", "--after", "doomed-0", "--command", "true")
	h.must("enqueue", "--id", "doomed-2", "--after", "doomed-1", "--command", "true")

	ws := []*proc{
		h.start("worker", "start", "--count", "2", "--no-spool"),
		h.start("worker", "start", "--count", "2", "--no-spool"),
		h.start("worker", "start", "--count", "2", "--no-spool"),
	}
	seed := uint64(time.Now().UnixNano())
	kills := killWorkers(t, h, ws, 6*time.Second, seed)
	_, _, code := h.run("wait", "--timeout", "2m", "join")
	jobs := map[string]flowJob{}
	for _, j := range h.flowJobs() {
		jobs[j.ID] = j
	}
	// A step may lose its run to a kill MaxLost times and end dead (SPEC
	// §3): on a loaded machine the kills outpace the chain. Then everything
	// after it ends dead, and the join with it; nothing else may fail.
	for id, j := range jobs {
		switch {
		case strings.HasPrefix(id, "doomed-"), j.State == "completed":
		case j.deadOfLosses():
			t.Logf("%s dead after %d lost runs (seed %d)", id, j.Lost, seed)
		case j.State == "dead" && deadDependency(jobs, j.LastError):
		default:
			t.Errorf("job %s is %s (%q, lost %d), want completed (seed %d, %d kills)", id, j.State, j.LastError, j.Lost, seed, kills)
		}
	}
	if want := map[string]int{"completed": 0, "dead": 1}[jobs["join"].State]; code != want {
		t.Errorf("wait join: exit %d with join %s, want %d (seed %d, %d kills)", code, jobs["join"].State, want, seed, kills)
	}
	if early, err := os.ReadFile(filepath.Join(dir, "early")); err == nil {
		t.Errorf("steps ran before the step they wait for completed: %s (seed %d)", early, seed)
	}
	h.run("wait", "--timeout", "1m", "doomed-2")
	for id, want := range map[string]string{"doomed-1": "dependency doomed-0 ended dead: exit 3", "doomed-2": "dependency doomed-0 ended dead: exit 3 (via doomed-1)"} {
		if v := h.show(id); v.State != "dead" || v.LastError != want {
			t.Errorf("%s = %s %q, want dead %q", id, v.State, v.LastError, want)
		}
	}
	t.Logf("dependency chaos: %d chains of %d, %d worker kills, seed %d", chains, steps, kills, seed)
}

package cli

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// flowJob is what the workflow chaos tests read of `list --json`.
type flowJob struct {
	ID    string            `json:"id"`
	State string            `json:"state"`
	Env   map[string]string `json:"env"`
}

func (h *qhome) flowJobs() []flowJob {
	h.t.Helper()
	var jobs []flowJob
	if err := json.Unmarshal([]byte(h.must("list", "--json")), &jobs); err != nil {
		h.t.Fatalf("list --json: %v", err)
	}
	return jobs
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
// every job the schedule made completes once the chaos ends.
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
	h.must("schedule", "pause", "tick")

	jobs := h.flowJobs()
	ids := make([]string, 0, len(jobs))
	due := map[string]string{}
	for _, j := range jobs {
		if d := j.Env["QUEUECTL_DUE"]; d == "" || due[d] != "" {
			t.Errorf("job %s: due time %q is empty or also job %s's", j.ID, d, due[d])
		} else {
			due[d] = j.ID
		}
		ids = append(ids, j.ID)
	}
	if len(jobs) < 3 {
		t.Fatalf("%d jobs in 8s of a schedule due every second (seed %d, %d kills), want at least 3", len(jobs), seed, kills)
	}
	// The surviving workers recover what the killed ones held.
	h.must(append([]string{"wait", "--timeout", "2m"}, ids...)...)
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

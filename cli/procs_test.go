package cli

import (
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestWorkerProcsFollowSlots: a worker sizes the Go runtime's Ps to its
// slots (one P for up to 8), follows `worker scale`, and leaves a
// GOMAXPROCS given in the environment alone. The runtime's own scheduler
// trace (GODEBUG=schedtrace) says how many Ps it has.
func TestWorkerProcsFollowSlots(t *testing.T) {
	t.Parallel()
	cpus := runtime.GOMAXPROCS(0) // the runtime's own choice, as the worker's
	if os.Getenv("GOMAXPROCS") != "" {
		cpus = runtime.NumCPU()
	}

	h := newHome(t)
	w := h.startEnv([]string{"GODEBUG=schedtrace=20", "GOMAXPROCS="}, "worker", "start", "--count", "2", "--no-spool")
	w.waitProcs(t, 1)
	h.must("worker", "scale", "9")
	w.waitProcs(t, min(2, cpus))
	h.must("worker", "scale", "1")
	w.waitProcs(t, 1)

	// The user's word stays, whatever the slots: once the worker ran a
	// job (its slots started), five more trace lines all say 3.
	u := newHome(t)
	u.must("enqueue", "--id", "j", "--command", "true")
	v := u.startEnv([]string{"GODEBUG=schedtrace=20", "GOMAXPROCS=3"}, "worker", "start", "--count", "2", "--no-spool")
	u.must("wait", "--timeout", "30s", "j")
	v.waitTraces(t, len(v.procs())+5)
	if got := v.procs(); slices.ContainsFunc(got, func(n int) bool { return n != 3 }) {
		t.Errorf("worker with GOMAXPROCS=3: the trace said gomaxprocs %v, want 3 throughout", got)
	}
}

var schedTrace = regexp.MustCompile(`SCHED \d+ms: gomaxprocs=(\d+)`)

// procs lists the gomaxprocs of each scheduler trace line so far.
func (p *proc) procs() []int {
	var out []int
	for _, m := range schedTrace.FindAllStringSubmatch(p.stderr.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// waitProcs waits until the last trace line says n Ps.
func (p *proc) waitProcs(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got := p.procs(); len(got) > 0 && got[len(got)-1] == n {
			return
		}
		if time.Now().After(deadline) {
			got := p.procs()
			t.Fatalf("the worker's Ps never became %d: its last trace lines said %v", n, got[max(0, len(got)-5):])
		}
	}
}

// waitTraces waits until the worker wrote n trace lines.
func (p *proc) waitTraces(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); len(p.procs()) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d scheduler trace lines after 30 s, want %d", len(p.procs()), n)
		}
	}
}

// startEnv is start with env added to the process's environment.
func (h *qhome) startEnv(env []string, args ...string) *proc {
	h.t.Helper()
	p := &proc{cmd: h.command(args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		h.t.Fatalf("start queuectl %v: %v", args, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	h.t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

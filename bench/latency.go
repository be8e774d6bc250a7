package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/spool"
)

// latency: an idle `worker start` (one slot, watching the spool) starts a
// job dropped into the spool, and a job enqueued by `queuectl enqueue` in
// another process. A sample runs from the rename into the spool, or from
// the enqueue's created_at, to the run's started_at (the claim, just before
// the fork). Each sample waits for the job to finish and lets the worker
// go idle before the next.
func (b *Suite) latency(ctx context.Context) ([]Result, error) {
	home, err := b.home(ctx, "latency")
	if err != nil {
		return nil, err
	}
	s, err := b.open(home)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	stop, err := b.startWorker(ctx, home, s, "--count", "1")
	if err != nil {
		return nil, err
	}
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := s.Changes(ctx)
	if err != nil {
		return nil, err
	}
	spoolDir := spool.DirsOf(home).Spool
	var dropped, enqueued []float64
	for i := -1; i < b.Samples; i++ { // sample -1 warms up
		id := fmt.Sprintf("spool-%d", i+1)
		tmp := filepath.Join(spoolDir, id+".json.tmp")
		if err := os.WriteFile(tmp, fmt.Appendf(nil, `{"id": %q, "command": "true"}`, id), 0o600); err != nil {
			return nil, fmt.Errorf("drop spool file: %w", err)
		}
		at := time.Now()
		if err := os.Rename(tmp, filepath.Join(spoolDir, id+".json")); err != nil {
			return nil, fmt.Errorf("drop spool file: %w", err)
		}
		started, err := waitStarted(ctx, s, changes, id)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			dropped = append(dropped, millis(started.Sub(at)))
		}
		pause(i)
	}
	// On a server, enqueue runs from a home of its own, as on another host:
	// the job reaches the worker through the store and its NOTIFY, where in
	// the worker's home it would go over the worker's socket.
	from, door := home, "latency: enqueue (other process) to job start"
	if b.DB != "" {
		from, door = filepath.Join(b.run, "latency-other-host"), "latency: enqueue (other host's home) to job start, via NOTIFY"
		if err := os.Mkdir(from, 0o700); err != nil {
			return nil, fmt.Errorf("create scratch home: %w", err)
		}
		b.share(from, b.store(home))
	}
	for i := range b.Samples {
		id := fmt.Sprintf("enqueue-%d", i)
		if _, err := b.timeRun(ctx, from, "enqueue", "-q", "--id", id, "--command", "true"); err != nil {
			return nil, err
		}
		started, err := waitStarted(ctx, s, changes, id)
		if err != nil {
			return nil, err
		}
		j, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		enqueued = append(enqueued, millis(started.Sub(j.CreatedAt)))
		pause(i)
	}
	return []Result{
		atMost("latency: spool drop to job start, idle worker", quantile(dropped, 0.5), quantile(dropped, 0.99), "ms", 10, 50),
		atMost(door, quantile(enqueued, 0.5), quantile(enqueued, 0.99), "ms", 10, 50),
	}, nil
}

// pause lets a worker that just finished a job go idle, for a varying
// while, so that samples do not fall in step with any timer.
func pause(i int) { time.Sleep(time.Duration(2+i%7) * time.Millisecond) }

// startWorker starts `worker start` with args on home and waits until it
// has registered. stop ends it (SIGTERM) and waits for it.
func (b *Suite) startWorker(ctx context.Context, home string, s *claim.Store, args ...string) (func(), error) {
	cmd, _, err := b.start(ctx, home, append([]string{"worker", "start"}, args...)...)
	if err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ws, err := s.Workers(ctx)
		if err == nil && len(ws) > 0 {
			return stop, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("worker exited at start: %v (see %s)", err, filepath.Join(home, "bench.log"))
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, errors.New("worker did not register within 10s")
		}
	}
}

// waitStarted waits for job id to exist and finish, and returns when its
// first run started. It wakes on changes, and polls in case one is missed.
func waitStarted(ctx context.Context, s *claim.Store, changes <-chan struct{}, id string) (time.Time, error) {
	deadline := time.After(30 * time.Second)
	for {
		j, err := s.Get(ctx, id)
		if err != nil && !errors.Is(err, claim.ErrNotFound) {
			return time.Time{}, err
		}
		if err == nil && (j.State == claim.Completed || j.State == claim.Dead) {
			runs, err := s.Runs(ctx, id)
			if err != nil || len(runs) == 0 {
				return time.Time{}, fmt.Errorf("runs of job %s: %v", id, err)
			}
			return runs[0].StartedAt, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-deadline:
			return time.Time{}, fmt.Errorf("job %s did not finish within 30s", id)
		case <-changes:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// footprint: the resident memory of `worker start --count 8` while it runs
// 8 × 40 short jobs, sampled every 10 ms; then `queuectl enqueue` from
// start to exit, with a worker idle (the job goes over its socket) and with
// none (the command writes the store). The jobs are scheduled an hour
// ahead, so that running them does not compete with the next sample.
func (b *Suite) footprint(ctx context.Context) ([]Result, error) {
	home, err := b.home(ctx, "footprint")
	if err != nil {
		return nil, err
	}
	s, err := b.open(home)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	mem, err := b.workerMemory(ctx, home, s, 40, "")
	if err != nil {
		return nil, err
	}
	out := []Result{mem}
	for _, worker := range []bool{true, false} {
		stop := func() {}
		if worker {
			if stop, err = b.startWorker(ctx, home, s); err != nil {
				return out, err
			}
		}
		var took []float64
		for i := range 51 {
			d, err := b.timeRun(ctx, home, "enqueue", "-q", "--id", fmt.Sprintf("startup-%v-%d", worker, i), "--delay", "1h", "--command", "true")
			if err != nil {
				stop()
				return out, err
			}
			took = append(took, millis(d))
		}
		stop()
		name := "queuectl enqueue, start to exit (worker idle: over its socket)"
		if !worker {
			name = "queuectl enqueue, start to exit (no worker: to the store)"
		}
		out = append(out, atMost(name, quantile(took, 0.5), quantile(took, 0.99), "ms", 10, 0))
	}
	return out, nil
}

// workerMemory samples, every 10 ms, the resident memory of `worker start
// --count 8` while it runs 8 × 40 short jobs added to home's store ahead of
// whatever else it holds, and holds its peak to limitMB.
func (b *Suite) workerMemory(ctx context.Context, home string, s *claim.Store, limitMB float64, where string) (Result, error) {
	const jobs = 8 * 40
	batch := make([]claim.NewJob, jobs)
	for i := range batch {
		batch[i] = claim.NewJob{Command: "sleep 0.05", Priority: 100, Queue: "footprint"}
	}
	if _, err := s.EnqueueAll(ctx, batch); err != nil {
		return Result{}, err
	}
	cmd, _, err := b.start(ctx, home, "worker", "start", "--count", "8", "--queue", "footprint")
	if err != nil {
		return Result{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	var rss []float64
	peak := 0.0
	for done := false; !done; {
		select {
		case err := <-exited:
			exited <- err
			return Result{}, fmt.Errorf("worker exited: %v (see %s)", err, filepath.Join(home, "bench.log"))
		case <-time.After(10 * time.Millisecond):
		}
		if now, hwm, err := memory(cmd.Process.Pid); err == nil {
			rss = append(rss, now)
			peak = max(peak, hwm)
		}
		counts, err := s.QueueCounts(ctx)
		if err != nil {
			return Result{}, err
		}
		done = counts["footprint"][claim.Completed] == jobs
	}
	name := strings.TrimSpace("RSS of worker start --count 8, running jobs " + where)
	mem := atMost(name, quantile(rss, 0.5), quantile(rss, 0.99), "MB", limitMB, limitMB)
	mem.Ratio, mem.Limit = peak/limitMB, fmt.Sprintf("peak %.1f MB ≤ %g MB", peak, limitMB)
	mem.Met = mem.Ratio <= 1
	return mem, nil
}

// memory reads a process's resident set and its peak, in MB.
func memory(pid int) (rss, peak float64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var kb float64
		if _, err := fmt.Sscanf(sc.Text(), "VmRSS: %g kB", &kb); err == nil {
			rss = kb / 1024
		}
		if _, err := fmt.Sscanf(sc.Text(), "VmHWM: %g kB", &kb); err == nil {
			peak = kb / 1024
		}
	}
	if rss == 0 {
		return 0, 0, errors.New("no VmRSS")
	}
	return rss, peak, nil
}

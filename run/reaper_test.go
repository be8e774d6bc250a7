package run

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// lostRuns makes n runs held by a worker process that is gone, each with a
// process group whose leader is a child of this test that nobody waits
// for: once killed, it stays a zombie, as the orphans of a dead worker do
// under a PID 1 that does not reap. It returns the group leaders.
func lostRuns(t *testing.T, s *claim.Store, n int) []*exec.Cmd {
	t.Helper()
	return lostRunsOf(t, s, n, "sleep 1000")
}

// lostRunsOf is lostRuns of jobs whose command, once recovered, is command.
func lostRunsOf(t *testing.T, s *claim.Store, n int, command string) []*exec.Cmd {
	t.Helper()
	ctx := context.Background()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	host := HostID()
	c := claim.Claimant{WorkerID: "gone-worker", Host: host, PID: gone.Process.Pid, Lease: time.Hour, LogDir: t.TempDir()}
	var leaders []*exec.Cmd
	for i := 0; i < n; i++ {
		enqueue(t, s, claim.NewJob{ID: fmt.Sprintf("lost-%d", i), Command: command})
		_, r, err := s.Claim(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sleep", "1000")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		leaders = append(leaders, cmd)
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		if err := s.Started(ctx, r, cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	return leaders
}

// The lost runs of a dead worker are recovered together, within SPEC §6's
// 5 s however many there are: their groups are killed at once and waited
// for together, and a group whose processes have all exited (zombies left
// for their parent to reap hold no files or locks) counts as gone.
func TestLostRunsRecoveredTogether(t *testing.T) {
	s := mustOpenStore(t)
	leaders := lostRuns(t, s, 8)
	w := newWorker(t, s)
	w.host = HostID()
	w.id = "reaper"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w.reapOnce(ctx, ctx)
	for i, cmd := range leaders {
		if j := get(t, s, fmt.Sprintf("lost-%d", i)); j.State != claim.Pending || j.Lost != 1 || j.Attempts != 0 {
			t.Errorf("job lost-%d after one reaper pass: state %s, lost %d, attempts %d; want pending, 1, 0", i, j.State, j.Lost, j.Attempts)
		}
		if err := cmd.Wait(); err == nil {
			t.Errorf("the group of lost-%d was not killed", i)
		}
	}
}

// A draining worker recovers the runs of a worker of this host that died
// (kill -9 before a nightly drain), runs their jobs, and only then ends;
// the run of another host's worker, whose lease holds, it leaves to that
// worker and does not wait for. Its end cuts no recovery short: no
// warning is said.
func TestDrainRecoversLostRuns(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	leaders := lostRunsOf(t, s, 1, "true")
	enqueue(t, s, claim.NewJob{ID: "elsewhere", Command: "true"})
	other := claim.Claimant{WorkerID: "other-host-worker", Host: "other-host/0123", PID: 1, Lease: time.Hour, LogDir: t.TempDir()}
	if _, _, err := s.Claim(ctx, other); err != nil {
		t.Fatal(err)
	}
	w := newWorker(t, s)
	var warnings []string
	var mu sync.Mutex
	w.Events = func(e Event) {
		t.Log(e)
		if e.Kind == EventWarning {
			mu.Lock()
			warnings = append(warnings, e.Err)
			mu.Unlock()
		}
	}
	soft, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := w.Run(soft, ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if soft.Err() != nil {
		t.Fatalf("the drain did not end on its own within 30s (it waits for another host's run?)")
	}
	if pgid := leaders[0].Process.Pid; liveGroups([]int{pgid})[pgid] {
		t.Errorf("the lost run's group was not killed")
	}
	if j := get(t, s, "lost-0"); j.State != claim.Completed || j.Lost != 1 || j.Attempts != 1 {
		t.Errorf("lost-0 after the drain: state %s, lost %d, attempts %d; want completed, 1, 1", j.State, j.Lost, j.Attempts)
	}
	if j := get(t, s, "elsewhere"); j.State != claim.Processing {
		t.Errorf("elsewhere after the drain: state %s; want processing (another host's worker holds its lease)", j.State)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) > 0 {
		t.Errorf("the drain said warnings %q, want none", warnings)
	}
}

// RecoverGone (what `cancel` runs when a job's worker was killed) kills
// what is left of the dead worker's runs before it recovers them, ends a
// job marked for cancel canceled, and leaves alone a run that another
// host's worker holds under a live lease.
func TestRecoverGoneKillsThenRecovers(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	leaders := lostRuns(t, s, 2)
	if _, _, _, err := s.Cancel(ctx, "lost-0"); err != nil {
		t.Fatal(err)
	}
	enqueue(t, s, claim.NewJob{ID: "elsewhere", Command: "true"})
	other := claim.Claimant{WorkerID: "other-host-worker", Host: "other-host/0123", PID: 1, Lease: time.Hour, LogDir: t.TempDir()}
	if _, _, err := s.Claim(ctx, other); err != nil {
		t.Fatal(err)
	}
	states, err := RecoverGone(ctx, s, []string{"lost-0", "lost-1", "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]claim.State{"lost-0": claim.Canceled, "lost-1": claim.Pending}
	if fmt.Sprint(states) != fmt.Sprint(want) {
		t.Errorf("RecoverGone = %v, want %v", states, want)
	}
	for i, cmd := range leaders {
		if pgid := cmd.Process.Pid; liveGroups([]int{pgid})[pgid] {
			t.Errorf("the group of lost-%d was not killed", i)
		}
	}
	for id, state := range map[string]claim.State{"lost-0": claim.Canceled, "lost-1": claim.Pending, "elsewhere": claim.Processing} {
		if j := get(t, s, id); j.State != state {
			t.Errorf("job %s: state %s, want %s", id, j.State, state)
		}
	}
}

// TestOtherHostRunLostWithinLeasePlus5s: a run of a worker that died on
// another host is recovered within lease + 5 s of the crash (SPEC §6). Its
// lease ends at most one lease after the crash (its last renewal came
// before), and reapers look only once per reapInterval, so a pass one
// interval before that bound must already take the run for lost; before
// its lease ends, no pass may.
func TestOtherHostRunLostWithinLeasePlus5s(t *testing.T) {
	leaseUntil := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f := claim.InFlight{Run: claim.Run{Host: "elsewhere/00000000", PID: 1}, LeaseUntil: leaseUntil}
	if last := leaseUntil.Add(5*time.Second - reapInterval); !runGone(f, "here/11111111", last, nil) {
		t.Errorf("runGone at lease end + %v = false: the next pass comes %v later, past lease + 5 s",
			last.Sub(leaseUntil), reapInterval)
	}
	if runGone(f, "here/11111111", leaseUntil.Add(-time.Nanosecond), nil) {
		t.Error("runGone before the lease ended = true")
	}
	w := claim.WorkerInfo{Host: f.Host, PID: 1, HeartbeatAt: leaseUntil.Add(-30 * time.Second)}
	if !Gone(w, "here/11111111", leaseUntil.Add(5*time.Second-reapInterval+time.Nanosecond), 30*time.Second) {
		t.Error("Gone: a worker of another host counts as running longer than its runs do")
	}
}

// TestGoneByTheWorkersOwnLease: a worker of another host is judged by the
// lease it registered, not by the reader's; a row without one (an older
// queuectl's) by the reader's.
func TestGoneByTheWorkersOwnLease(t *testing.T) {
	beat := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := beat.Add(time.Minute)
	w := claim.WorkerInfo{Host: "elsewhere/00000000", PID: 1, HeartbeatAt: beat, Lease: 10 * time.Minute}
	if Gone(w, "here/11111111", now, 3*time.Second) {
		t.Error("Gone of a worker with lease 10m, a minute after its heartbeat, read with lease 3s = true")
	}
	if w.Lease = 0; !Gone(w, "here/11111111", now, 3*time.Second) {
		t.Error("Gone of an older worker's row, a minute after its heartbeat, read with lease 3s = false")
	}
	w.Lease = 3 * time.Second
	if !Gone(w, "here/11111111", now, 10*time.Minute) {
		t.Error("Gone of a worker with lease 3s, a minute after its heartbeat, read with lease 10m = false")
	}
}

// TestNotGoneWhileItsServerWasDown: a worker of another host not heard
// from for longer than its lease is gone, unless the store's server
// started since: a server down that long heard nobody meanwhile, and its
// workers are counted from its start (claim.WorkerInfo.SilentSince).
func TestNotGoneWhileItsServerWasDown(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	w := claim.WorkerInfo{Host: "elsewhere/00000000", PID: 1, HeartbeatAt: now.Add(-time.Minute), Lease: 30 * time.Second}
	if !Gone(w, "here/11111111", now, time.Minute) {
		t.Error("Gone of a worker silent for a minute, lease 30s = false")
	}
	w.SilentSince = now.Add(-2 * time.Second)
	if Gone(w, "here/11111111", now, time.Minute) {
		t.Error("Gone of a worker silent for a minute, its server started 2s ago = true")
	}
	w.SilentSince = now.Add(-time.Hour) // the server's start, long before the heartbeat
	if !Gone(w, "here/11111111", now, time.Minute) {
		t.Error("Gone of a worker silent for a minute, its server up for an hour = false")
	}
}

// TestGoneWhenItsPidCameRound: a worker of this host whose pid another
// process holds now (pids wrap at pid_max, 32768 on many hosts) is gone,
// told by its process's start; the worker's own process is not, and a row
// that does not say when its process started is judged by the pid alone.
func TestGoneWhenItsPidCameRound(t *testing.T) {
	other, start := laterProcess(t)
	host, now := HostID(), time.Now()
	w := claim.WorkerInfo{Host: host, PID: other.Process.Pid, PIDStart: start - 1, StartedAt: now, HeartbeatAt: now}
	if !Gone(w, host, now, time.Hour) {
		t.Error("Gone of a worker whose pid a process started later holds = false")
	}
	if w.PIDStart = start; Gone(w, host, now, time.Hour) {
		t.Error("Gone of a worker whose own process lives = true")
	}
	if w.PIDStart = 0; Gone(w, host, now, time.Hour) {
		t.Error("Gone of a row without its process's start, its pid alive = true")
	}
}

// laterProcess starts a process that lives until the test ends, to hold a
// pid as one started after a worker that had it would: it returns it and
// its start.
func laterProcess(t *testing.T) (*exec.Cmd, uint64) {
	t.Helper()
	other := exec.Command("sleep", "1000")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	start, ok := processStart(other.Process.Pid)
	if !ok || start == 0 {
		t.Skip("no process start times here (no /proc)")
	}
	return other, start
}

// TestRunOfAWorkerWhosePidCameRoundRecovered: a run of a worker of this
// host that died, whose pid another process took since, is recovered by
// the next reaper pass, long before its lease lapses, and its worker's
// row leaves the registry.
func TestRunOfAWorkerWhosePidCameRoundRecovered(t *testing.T) {
	s := mustOpenStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	other, start := laterProcess(t)
	host := HostID()
	dead := claim.WorkerInfo{ID: "dead-worker", Host: host, PID: other.Process.Pid, PIDStart: start - 1, Slots: 1,
		StartedAt: s.Now(), HeartbeatAt: s.Now(), Lease: time.Hour}
	if err := s.RegisterWorker(ctx, dead); err != nil {
		t.Fatal(err)
	}
	enqueue(t, s, claim.NewJob{ID: "orphaned", Command: "true"})
	c := claim.Claimant{WorkerID: dead.ID, Host: host, PID: dead.PID, Lease: time.Hour, LogDir: t.TempDir()}
	if _, _, err := s.Claim(ctx, c); err != nil {
		t.Fatal(err)
	}
	w := newWorker(t, s)
	w.host, w.id = host, "reaper"
	if !w.reapOnce(ctx, ctx) {
		t.Fatal("reapOnce = false")
	}
	if j := get(t, s, "orphaned"); j.State != claim.Pending || j.Lost != 1 {
		t.Errorf("job after one reaper pass: state %s, lost %d; want pending, 1 (its lease holds an hour)", j.State, j.Lost)
	}
	workers, err := s.Workers(ctx)
	if err != nil || len(workers) != 0 {
		t.Errorf("registry after the pass = %v, %v; want the dead worker removed", workers, err)
	}
	if other.ProcessState != nil {
		t.Error("the process that took the pid was waited for")
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process that took the dead worker's pid: %v; want it left alone", err)
	}
}

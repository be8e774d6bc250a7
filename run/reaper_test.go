package run

import (
	"context"
	"fmt"
	"os/exec"
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
	ctx := context.Background()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	host := HostID()
	c := claim.Claimant{WorkerID: "gone-worker", Host: host, PID: gone.Process.Pid, Lease: time.Hour, LogDir: t.TempDir()}
	var leaders []*exec.Cmd
	for i := 0; i < n; i++ {
		enqueue(t, s, claim.NewJob{ID: fmt.Sprintf("lost-%d", i), Command: "sleep 1000"})
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
	w.reapOnce(ctx)
	for i, cmd := range leaders {
		if j := get(t, s, fmt.Sprintf("lost-%d", i)); j.State != claim.Pending || j.Lost != 1 || j.Attempts != 0 {
			t.Errorf("job lost-%d after one reaper pass: state %s, lost %d, attempts %d; want pending, 1, 0", i, j.State, j.Lost, j.Attempts)
		}
		if err := cmd.Wait(); err == nil {
			t.Errorf("the group of lost-%d was not killed", i)
		}
	}
}

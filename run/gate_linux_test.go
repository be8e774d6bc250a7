package run

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/sqlite/sqlitetest"
)

// gateChild names, in the environment of the re-executed test binary, the
// database the child worker claims from.
const gateChild = "QUEUECTL_TEST_GATE_DB"

// A worker can die after it forks a job but before the job's process group
// is recorded in the store (a run's start is recorded with its end, or
// after startRecordDelay): the reaper of the next worker then has no group
// to kill, and what the job started must not run on beside its next run.
// Here a child process claims the job, the test takes the write lock so
// that nothing of the run can be recorded, the child forks the job, and is
// SIGKILLed once the job has started. Its guard kills the run's group.
// (Where there is no guard, the start is recorded before the job runs:
// TestUnguardedRunRecordsItsStartFirst.)
func TestRunDiesBeforeItsStartIsRecorded(t *testing.T) {
	if db := os.Getenv(gateChild); db != "" {
		gateChildWorker(t, db)
		return
	}
	s := mustOpenStore(t)
	out := filepath.Join(t.TempDir(), "out")
	enqueue(t, s, claim.NewJob{ID: "gated", Command: fmt.Sprintf(
		`echo "start $QUEUECTL_ATTEMPT" >> %s; (sleep 2; echo "end $QUEUECTL_ATTEMPT" >> %s)`, out, out)})
	child := exec.Command(os.Args[0], "-test.run=^TestRunDiesBeforeItsStartIsRecorded$")
	child.Env = append(os.Environ(), gateChild+"="+s.Path())
	child.Stderr = os.Stderr
	in, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "claimed\n" {
		t.Fatalf("child said %q, want claimed", line)
	}

	unlock := sqlitetest.WriteLock(t, s.Path())
	in.Write([]byte("go\n")) // the child forks the job; nothing of it can be recorded
	for deadline := time.Now().Add(10 * time.Second); !exists(out); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the job did not start within 10s")
		}
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	unlock()

	w := newWorker(t, s)
	w.host = HostID()
	w.reapOnce(context.Background(), context.Background())
	drain(t, w)
	// The second run took 2s: the first run's subshell, had it lived,
	// would have written its end meanwhile.
	data, _ := os.ReadFile(out)
	if got := string(data); got != "start 1\nstart 2\nend 2\n" {
		t.Errorf("out has %q, want the first run's start, then the second run whole: the first run escaped its worker's death", got)
	}
	runs, err := s.Runs(context.Background(), "gated")
	if err != nil || len(runs) != 2 || runs[0].PGID != 0 {
		t.Errorf("runs = %+v, %v; want 2, the first with no process group recorded", runs, err)
	}
}

// gateChildWorker claims the one job of the store at db, says so, waits
// for a line on stdin, and runs the job, until it is killed.
func gateChildWorker(t *testing.T, db string) {
	s, err := claim.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	host := HostID()
	// No t.TempDir here: a killed child never removes it.
	w := &Worker{Store: s, Config: claim.DefaultConfig(), LogDir: filepath.Join(filepath.Dir(db), "logs"),
		host: host, id: "child"}
	c := claim.Claimant{WorkerID: w.id, Host: host, PID: os.Getpid(), Lease: time.Hour, LogDir: w.LogDir}
	j, r, err := s.Claim(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("claimed")
	if line, _ := bufio.NewReader(os.Stdin).ReadString('\n'); strings.TrimSpace(line) != "go" {
		t.Fatalf("read %q, want go", line)
	}
	w.execute(context.Background(), j, r, nil)
	t.Fatal("the job ran to its end: it was to be killed with this worker")
}

package run

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// A run is over, for a Tail without a Watch, only once its command
// started and no process of it is left while its worker lives: not while
// it runs long, not before it started, not when its worker is gone.
func TestRunOver(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := claim.Run{JobID: "j", Attempt: 1, WorkerID: "w", Host: HostID(), PID: os.Getpid(), PGID: cmd.Process.Pid,
		ExecAt: time.Now(), StdoutPath: filepath.Join(dir, "1.out"), StderrPath: filepath.Join(dir, "1.err")}
	if over(r) {
		t.Errorf("over(a run whose process lives) = true, want false")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !over(r) {
		t.Errorf("over(a run whose processes are gone) = false, want true")
	}
	notStarted := r
	notStarted.PGID, notStarted.ExecAt = 0, time.Time{}
	if over(notStarted) {
		t.Errorf("over(a run with no recorded start and no log file) = true, want false")
	}
	if err := os.WriteFile(notStarted.StdoutPath, []byte("out"), 0o600); err != nil {
		t.Fatal(err)
	}
	if want := runtime.GOOS == "linux"; over(notStarted) != want { // only Linux shows the marks
		t.Errorf("over(a run with a log file and no process with its mark) = %v, want %v", !want, want)
	}
	workerGone := r
	workerGone.PID = cmd.Process.Pid // reaped: no such process
	if over(workerGone) {
		t.Errorf("over(a run whose worker is gone) = true, want false: the run is lost, not waiting")
	}
}

// A run seen over in the store, whose worker holds no tails for it, has
// all its files written, then said, and its files are closed, so that
// removing them makes room.
func TestTailUnrecordedWithoutTails(t *testing.T) {
	dir := t.TempDir()
	r := claim.Run{Host: HostID(), Attempt: 1, StdoutPath: filepath.Join(dir, "1.out"), StderrPath: filepath.Join(dir, "1.err")}
	if err := os.WriteFile(r.StdoutPath, []byte("0123"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	said := ""
	tl := &Tail{Stdout: &stdout, Stderr: &stderr, Unrecorded: func(Unrecorded, int64) { said = stdout.String() }}
	var l runLogs
	defer l.close()
	l.open(r)
	if err := l.copyTo(0, &stdout, 2); err != nil { // "01" written before
		t.Fatal(err)
	}
	if err := tl.unrecorded(&l, Unrecorded{Run: r}); err != nil {
		t.Fatal(err)
	}
	if said != "0123" || stdout.String() != "0123" || l.files[0] != nil {
		t.Errorf("unrecorded: stdout %q when said, %q after, file open %v; want %q both times, the file closed", said, stdout.String(), l.files[0] != nil, "0123")
	}
}

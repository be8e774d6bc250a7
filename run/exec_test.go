package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// A job behind its gate says what `/bin/sh -c CMD` would say, word for
// word: the shell's diagnostics name no wrapper of queuectl's (such as
// "eval:"), count lines from the command's first, and $0 and the
// positional parameters are those of /bin/sh -c.
func TestJobRunsAsShDashC(t *testing.T) {
	commands := []string{
		"queuectl-test-no-such-command",
		"echo one\nqueuectl-test-no-such-command two",
		`echo "[$0] $# [$*]"; shift`,
		"echo $LINENO\necho $LINENO",
		"echo ok; (",
		": ${queuectl_test_unset?is not set}",
		"echo x > no/such/dir/file",
		"cd no-such-dir; echo $((1/0))",
		`echo "[$gate]"`, // a variable of the job's environment, whatever its name
	}
	s := mustOpenStore(t)
	dir := t.TempDir()
	one := 1
	for i, c := range commands {
		enqueue(t, s, claim.NewJob{ID: fmt.Sprint("c", i), Command: c, Cwd: dir, MaxRetries: &one,
			Env: map[string]string{"gate": "mine"}})
	}
	w := newWorker(t, s)
	drain(t, w)

	for i, c := range commands {
		id := fmt.Sprint("c", i)
		sh := exec.Command("/bin/sh", "-c", c)
		sh.Dir, sh.Env = dir, append(os.Environ(), "gate=mine")
		var wantOut, wantErr bytes.Buffer
		sh.Stdout, sh.Stderr = &wantOut, &wantErr
		wantCode := 0
		if err := sh.Run(); err != nil {
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatal(err)
			}
			wantCode = exit.ExitCode()
		}
		out, _ := os.ReadFile(filepath.Join(w.LogDir, id, "1.out"))
		errOut, _ := os.ReadFile(filepath.Join(w.LogDir, id, "1.err"))
		runs, err := s.Runs(context.Background(), id)
		if err != nil || len(runs) != 1 || runs[0].ExitCode == nil {
			t.Fatalf("job %q: runs %+v, %v; want one that exited", c, runs, err)
		}
		if string(out) != wantOut.String() || string(errOut) != wantErr.String() || *runs[0].ExitCode != wantCode {
			t.Errorf("job %q: stdout %q, stderr %q, exit %d; want as /bin/sh -c: %q, %q, %d",
				c, out, errOut, *runs[0].ExitCode, wantOut.String(), wantErr.String(), wantCode)
		}
	}
}

// A job that carries a umask runs its command, and what the command
// starts, under it, whichever way the command reaches the shell (beside
// the gate, or through eval when too long), and says what /bin/sh -c
// says under that umask (its lines count from the command's first). A job
// without one keeps the worker's umask, which no job's changes.
func TestJobRunsWithItsUmask(t *testing.T) {
	out, err := exec.Command("/bin/sh", "-c", "umask").Output() // the worker's: this process's
	if err != nil {
		t.Fatal(err)
	}
	workers := strings.TrimSpace(string(out))
	// What umask prints, the mode of a new file, and a diagnostic that
	// names the command's second line.
	show := "umask; touch f; ls -l f | cut -c1-10; rm f\nqueuectl-test-no-such-command"
	long := show + " #" + strings.Repeat("x", claim.MaxArgLen-len(show)-2)
	cases := []struct {
		id       string
		mask     *int
		long     bool
		wantMode string
	}{
		{"private", intp(0o077), false, "-rw-------"},
		{"private-long", intp(0o077), true, "-rw-------"},
		{"open", intp(0), false, "-rw-rw-rw-"},
		{"group", intp(0o002), false, "-rw-rw-r--"},
		{"none", nil, false, ""}, // the worker's, below
	}
	s := mustOpenStore(t)
	dirs := map[string]string{}
	for _, c := range cases {
		command := show
		if c.long {
			command = long
		}
		dirs[c.id] = filepath.Join(t.TempDir(), c.id)
		if err := os.Mkdir(dirs[c.id], 0o700); err != nil {
			t.Fatal(err)
		}
		enqueue(t, s, claim.NewJob{ID: c.id, Command: command, Cwd: dirs[c.id], Umask: c.mask})
	}
	w := newWorker(t, s)
	drain(t, w)
	for _, c := range cases {
		got, _ := os.ReadFile(filepath.Join(w.LogDir, c.id, "1.out"))
		gotErr, _ := os.ReadFile(filepath.Join(w.LogDir, c.id, "1.err"))
		if c.mask == nil {
			if mask, _, _ := strings.Cut(string(got), "\n"); mask != workers {
				t.Errorf("job %s without a umask ran under %q, want the worker's %q", c.id, mask, workers)
			}
			continue
		}
		if want := claim.UmaskText(c.mask) + "\n" + c.wantMode + "\n"; string(got) != want {
			t.Errorf("job %s with umask %s printed %q, want %q", c.id, claim.UmaskText(c.mask), got, want)
		}
		if c.long {
			continue // through eval, whose diagnostics say so
		}
		// /bin/sh -c, started by a shell that set the umask first.
		sh := exec.Command("/bin/sh", "-c", "umask "+claim.UmaskText(c.mask)+"; exec /bin/sh -c \"$1\"", "/bin/sh", show)
		sh.Dir = dirs[c.id]
		var wantErr bytes.Buffer
		sh.Stderr = &wantErr
		sh.Run()
		if string(gotErr) != wantErr.String() {
			t.Errorf("job %s with umask %s: stderr %q, want as /bin/sh -c: %q", c.id, claim.UmaskText(c.mask), gotErr, wantErr.String())
		}
	}
	if out, err := exec.Command("/bin/sh", "-c", "umask").Output(); err != nil || strings.TrimSpace(string(out)) != workers {
		t.Errorf("after the jobs, the worker's umask is %q (%v), want %q as before", out, err, workers)
	}
}

func intp(n int) *int { return &n }

// A command as long as a job's may be (one argument of exec) runs, though
// the gate's text would not fit beside it in that argument.
func TestLongestCommandRuns(t *testing.T) {
	s := mustOpenStore(t)
	cmd := "echo long #"
	cmd += strings.Repeat("x", claim.MaxArgLen-len(cmd))
	enqueue(t, s, claim.NewJob{ID: "long", Command: cmd})
	w := newWorker(t, s)
	drain(t, w)

	if j := get(t, s, "long"); j.State != claim.Completed {
		t.Errorf("job is %s (%s), want completed", j.State, j.LastError)
	}
	if out, _ := os.ReadFile(filepath.Join(w.LogDir, "long", "1.out")); string(out) != "long\n" {
		t.Errorf("stdout log = %q, want %q", out, "long\n")
	}
}

// Nothing of a command runs before its gate opens: a gate closed unopened
// (the worker died) ends the shell with 125, whichever way the command
// reaches it, and "go" runs it.
func TestGateHoldsTheCommand(t *testing.T) {
	dir := t.TempDir()
	for _, long := range []bool{false, true} {
		for _, open := range []bool{false, true} {
			mark := filepath.Join(dir, fmt.Sprintf("ran-%v-%v", long, open))
			command := "touch " + mark
			if long {
				command += " #" + strings.Repeat("x", claim.MaxArgLen)[:claim.MaxArgLen-len(command)-2]
			}
			gate, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			sh := exec.Command("/bin/sh", gatedArgs(command, nil)...)
			sh.ExtraFiles = []*os.File{gate}
			if err := sh.Start(); err != nil {
				t.Fatal(err)
			}
			gate.Close()
			if open {
				w.Write([]byte("go\n"))
			}
			w.Close()
			err = sh.Wait()
			code := sh.ProcessState.ExitCode()
			if ran := exists(mark); ran != open || (open && code != 0) || (!open && code != 125) {
				t.Errorf("long %v, gate opened %v: exit %d (%v), command ran %v; want %v, exit 0 if opened, else 125",
					long, open, code, err, ran, open)
			}
		}
	}
}

// A job whose working directory is gone fails saying so, not that
// /bin/sh is missing (the child's chdir and exec fail alike).
func TestMissingCwdIsNamed(t *testing.T) {
	s := mustOpenStore(t)
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o700); err != nil {
		t.Fatal(err)
	}
	one := 1
	enqueue(t, s, claim.NewJob{ID: "cwd", Command: "pwd", Cwd: gone, MaxRetries: &one})
	if err := os.Remove(gone); err != nil { // gone once enqueued: a build directory cleaned
		t.Fatal(err)
	}
	w := newWorker(t, s)
	drain(t, w)

	j := get(t, s, "cwd")
	if j.State != claim.Dead || !strings.Contains(j.LastError, "working directory: stat "+gone+": no such file or directory") {
		t.Errorf("job is %s (%q), want dead for its working directory", j.State, j.LastError)
	}
}

package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEnqueueStreamAllOrNothing: `enqueue -f` and `enqueue -` take input of
// any size (70 MiB here, past the whole-input bound they had), line by
// line, in one transaction and bounded memory: all of it, or none when a
// line is refused, however late. A line over 1 MiB is refused.
func TestEnqueueStreamAllOrNothing(t *testing.T) {
	h := newHome(t)
	line := `{"command": "true"` + strings.Repeat(" ", 4096-len(`{"command": "true"}`)-1) + "}\n"
	n := 70 << 20 / len(line)
	dir := t.TempDir()
	big := bytes.Repeat([]byte(line), n)
	for name, tail := range map[string]string{
		"bad-last.jsonl":  `{"command": "true", "retries": 1}` + "\n",
		"long-last.jsonl": `{"command": "` + strings.Repeat("x", 1<<20) + `"}` + "\n",
	} {
		path := filepath.Join(dir, name)
		writeFile(t, path, append(big[:len(big):len(big)], tail...))
		if _, errText, code := h.run("enqueue", "-q", "-f", path); code != 2 || !strings.Contains(errText, fmt.Sprintf("line %d", n+1)) {
			t.Errorf("enqueue -f %s: exit %d, stderr %q; want 2 and the error of line %d", name, code, errText, n+1)
		}
	}
	if _, errText, code := h.run("enqueue", "-q", "-f", "/dev/zero"); code != 2 || !strings.Contains(errText, "over 1024 KiB") {
		t.Errorf("enqueue -f /dev/zero: exit %d, stderr %q; want 2 and a line over 1024 KiB", code, errText)
	}
	if total := h.queueStatus().Total; total != 0 {
		t.Fatalf("%d jobs stored from refused input, want none", total)
	}
	path := filepath.Join(dir, "big.jsonl")
	writeFile(t, path, big)
	cmd := h.command("enqueue", "-q", "-")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var errb bytes.Buffer
	cmd.Stdin, cmd.Stderr = f, &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// enqueue prints only once the transaction has committed, and blocks
	// on the pipe: its peak is measured after the whole input went in.
	first := make([]byte, 1)
	if _, err := io.ReadFull(stdout, first); err != nil {
		cmd.Wait()
		t.Fatalf("enqueue - of 70 MiB: %v\n%s", err, errb.String())
	}
	hwm := peakResident(t, cmd.Process.Pid)
	t.Logf("enqueue - of %d jobs (70 MiB): peak resident %d MiB", n, hwm>>20)
	if hwm > 64<<20 && !raceBinaries {
		t.Errorf("enqueue - of 70 MiB peaked at %d MiB resident, want at most 64", hwm>>20)
	}
	rest, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("enqueue - of 70 MiB: %v\n%s", err, errb.String())
	}
	out := bytes.NewBuffer(append(first, rest...))
	if ids := strings.Count(out.String(), "\n"); ids != n {
		t.Errorf("enqueue -q - printed %d ids, want %d", ids, n)
	}
	if total := h.queueStatus().Total; total != n {
		t.Errorf("%d jobs stored, want %d", total, n)
	}
}

// TestEnqueueStreamKilled kills `enqueue -` (SIGKILL) in the middle of its
// stream, jobs already inserted in its open transaction: none is stored,
// on either engine.
func TestEnqueueStreamKilled(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testEnqueueStreamKilled(t, newHome(t)) })
	t.Run("postgres", func(t *testing.T) { testEnqueueStreamKilled(t, newPostgresHome(t)) })
}

func testEnqueueStreamKilled(t *testing.T, h *qhome) {
	h.must("enqueue", "--id", "before", "--command", "true")
	cmd := h.command("enqueue", "-q", "-")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// A pipe holds 64 KiB and enqueue reads ahead 64 KiB more: once these
	// 2 MiB are written, all but the last 128 KiB were read, and every
	// chunk of 1,000 jobs of them but the last inserted, in the open
	// transaction.
	var b bytes.Buffer
	for i := 0; b.Len() < 2<<20; i++ {
		fmt.Fprintf(&b, `{"id": "s-%07d", "command": "true"}`+"\n", i)
	}
	if _, err := in.Write(b.Bytes()); err != nil {
		t.Fatalf("write: %v\n%s", err, errb.String())
	}
	cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("enqueue - still runs a minute after SIGKILL")
	}
	if total := h.queueStatus().Total; total != 1 {
		t.Errorf("%d jobs stored after enqueue - was killed mid-stream, want 1 (the one before)", total)
	}
	h.must("enqueue", "--id", "after", "--command", "true")
}

// peakResident is the peak resident size of process pid since it started
// its program (VmHWM; a child's rusage would count its parent's pages it
// shared before exec).
func peakResident(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: peak memory not measured: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

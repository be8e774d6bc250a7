package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/internal/testenv"
)

// TestJobOfAWorkerOnATerminalHasNone: a worker in the foreground of a
// terminal, as the README starts it, runs its jobs without that terminal,
// as cron does: a job that asks it for something (`read x < /dev/tty`, a
// password prompt of ssh or sudo) fails at once instead of being stopped
// by SIGTTIN (a background process group reading its terminal) and left
// "running" for ever, or until its timeout. Its hooks likewise.
func TestJobOfAWorkerOnATerminalHasNone(t *testing.T) {
	h := newHome(t)
	master, tty := testenv.OpenPTY(t)
	defer master.Close() // the terminal stays up while the worker runs
	cmd := h.command("worker", "start", "--no-spool")
	cmd.Stdin = tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	w := h.startRegistered(cmd)
	tty.Close()
	const ask = `if read x < /dev/tty; then echo "read $x"; else echo "no terminal"; fi`
	h.must("enqueue", "--id", "asks", "--max-retries", "1", "--command", ask)
	hooked := filepath.Join(t.TempDir(), "hooked")
	spec, _ := json.Marshal(map[string]string{"id": "hooked", "command": "true", "on_success": "(" + ask + ") > " + hooked})
	h.must("enqueue", string(spec))
	if _, errText, code := h.run("wait", "--timeout", "20s", "asks", "hooked"); code != 0 {
		t.Fatalf("wait for a job that reads /dev/tty: exit %d, want 0 (it finds no terminal and goes on)\n%s\nworker: %s", code, errText, w.stderr)
	}
	if out := h.must("logs", "asks"); out != "no terminal\n" {
		t.Errorf("logs asks = %q, want %q", out, "no terminal\n")
	}
	waitFor(t, 20*time.Second, "the hook to find no terminal", func() bool {
		b, _ := os.ReadFile(hooked)
		return string(b) == "no terminal\n"
	})
}

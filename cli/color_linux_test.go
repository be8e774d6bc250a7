package cli

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/queuectl/queuectl/internal/testenv"
)

// TestColorOnlyOnATerminal: state words are coloured when stdout is a
// terminal, and never when it is a pipe or NO_COLOR is set.
func TestColorOnlyOnATerminal(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "ok", "--command", "true")
	h.must("worker", "start", "--drain", "--no-spool")
	const green = "\x1b[32mcompleted\x1b[0m"

	tests := []struct {
		name    string
		tty     bool
		noColor string // "-": unset
		want    bool
	}{
		{"terminal", true, "-", true},
		{"terminal with NO_COLOR", true, "1", false},
		{"terminal with NO_COLOR empty", true, "", true}, // no-color.org: only a non-empty value
		{"pipe", false, "-", false},
	}
	for _, tt := range tests {
		cmd := h.command("list")
		cmd.Env = withoutEnv(cmd.Env, "NO_COLOR")
		if tt.noColor != "-" {
			cmd.Env = append(cmd.Env, "NO_COLOR="+tt.noColor)
		}
		var out string
		if tt.tty {
			out = runOnTerminal(t, cmd)
		} else {
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			out = string(b)
		}
		if !strings.Contains(out, "completed") {
			t.Fatalf("%s: list printed %q, want the completed job", tt.name, out)
		}
		if got := strings.Contains(out, green); got != tt.want {
			t.Errorf("%s: coloured = %v, want %v; output %q", tt.name, got, tt.want, out)
		}
		if !tt.want && strings.Contains(out, "\x1b[") {
			t.Errorf("%s: escape codes in %q", tt.name, out)
		}
	}
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// runOnTerminal runs cmd with stdout on a new pseudo-terminal and returns
// what it printed there.
func runOnTerminal(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	master, tty := testenv.OpenPTY(t)
	defer master.Close()
	cmd.Stdout = tty
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds its own copy; EOF comes when it exits
	var out bytes.Buffer
	_, err := io.Copy(&out, master)
	if err != nil && !errors.Is(err, syscall.EIO) { // Linux: EIO once the other side is closed
		t.Fatalf("read terminal: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.String())
	}
	return out.String()
}

package cli

import (
	"strings"
	"testing"
)

// TestCPULimitIsPerProcess: the help of the limits says that limit-cpu
// counts each process's CPU time, not the job's.
func TestCPULimitIsPerProcess(t *testing.T) {
	h := newHome(t)
	help, _, _ := h.run("config", "set", "--help")
	list := h.must("config", "list")
	for what, text := range map[string]string{"config set --help": help, "config list": list} {
		if !strings.Contains(text, "each process") {
			t.Errorf("%s does not say limit-cpu counts each process:\n%s", what, text)
		}
	}
}

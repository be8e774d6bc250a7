package cli

import (
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
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

// TestConfigHelpListsEverySetting: config --help (and so queuectl-config(1)
// and docs/commands.md) names every key with its default, so that the keys
// can be looked up without a store to run config list against.
func TestConfigHelpListsEverySetting(t *testing.T) {
	h := newHome(t)
	help, _, _ := h.run("config", "--help")
	lines := strings.Split(help, "\n")
	for _, k := range claim.ConfigKeys {
		def := k.Default
		if def == "" {
			def = "none"
		}
		found := false
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) >= 3 && f[0] == k.Name && f[1] == def {
				found = true
			}
		}
		if !found {
			t.Errorf("config --help has no line %q DEFAULT %q:\n%s", k.Name, def, help)
		}
	}
	for _, l := range lines {
		if len(l) > 100 {
			t.Errorf("config --help has a line of %d characters: %q", len(l), l)
		}
	}
}

// TestEnqueueHelpSaysWhereLimitsGo: enqueue --help, where one looks for
// how to limit a job's memory, says that limits (and hooks), which have
// no flag, go in the JSON spec; it said nothing of them.
func TestEnqueueHelpSaysWhereLimitsGo(t *testing.T) {
	h := newHome(t)
	help, _, _ := h.run("enqueue", "--help")
	for _, want := range []string{`"limits"`, "memory", `"on_failure"`, "config", "config set limit-memory"} {
		if !strings.Contains(help, want) {
			t.Errorf("enqueue --help does not mention %s:\n%s", want, help)
		}
	}
}

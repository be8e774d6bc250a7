package jobs

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestHostIDTellsPIDNamespacesApart: a process of another PID namespace of
// this kernel, with this hostname and boot id, has another host ID: its
// pids are not this one's, so neither may judge the other's runs by them.
// This namespace, the kernel's first, keeps the plain hostname/boot id.
func TestHostIDTellsPIDNamespacesApart(t *testing.T) {
	if os.Getenv("QUEUECTL_PRINT_HOST_ID") != "" {
		os.Stdout.WriteString(HostID() + "\n")
		return
	}
	here := HostID()
	if _, err := os.Stat("/proc/sys/kernel/random/boot_id"); err != nil {
		t.Skip("no boot id here (not Linux)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare (util-linux) is needed: %v", err)
	}
	cmd := exec.Command(unshare, "--pid", "--fork", os.Args[0], "-test.run", "^TestHostIDTellsPIDNamespacesApart$")
	cmd.Env = append(os.Environ(), "QUEUECTL_PRINT_HOST_ID=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("unshare --pid: %v (a new PID namespace needs root or a user namespace)", err)
	}
	there, _, _ := strings.Cut(string(out), "\n")
	name, boot, _ := strings.Cut(here, "/")
	if strings.Contains(boot, ":") && pidNamespace() != "" {
		t.Logf("this test runs in a PID namespace of its own: host ID %s", here)
	} else if strings.Contains(boot, ":") {
		t.Errorf("host ID %s in the kernel's first PID namespace: want hostname/boot id alone", here)
	}
	if there == here || !strings.HasPrefix(there, name+"/"+strings.Split(boot, ":")[0]+":") {
		t.Errorf("host ID in another PID namespace = %q, here %q; want this hostname and boot id, and its namespace after a colon", there, here)
	}
}

package run

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/testenv"
)

func TestLimitsAreSetBeforeTheCommandRuns(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	w.Config.Limits = claim.Limits{Memory: 256 << 20, CPU: 90 * time.Second, NoFile: 64, NProc: 4000, FSize: 1 << 20}
	one := 1
	enqueue(t, s, claim.NewJob{ID: "lim", Command: "cat /proc/self/limits", MaxRetries: &one})
	drain(t, w)
	j := get(t, s, "lim")
	if j.State != claim.Completed {
		t.Fatalf("job is %s (%s), want completed", j.State, j.LastError)
	}
	out := readFile(t, filepath.Join(w.LogDir, "lim", "1.out"))
	for _, want := range []string{
		`Max cpu time\s+90\s+91\s`,
		`Max open files\s+64\s+64\s`,
		`Max processes\s+4000\s+4000\s`,
		`Max file size\s+1048576\s+1048576\s`,
		`Max address space\s+268435456\s+268435456\s`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the job's /proc/self/limits:\n%s\nwant a line matching %q", out, want)
		}
	}
}

func TestRunKilledByALimitSaysSo(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	one := 1
	for _, tt := range []struct {
		id, command string
		limits      claim.Limits
	}{
		{"spin", "while :; do :; done", claim.Limits{CPU: time.Second}},
		{"big", "head -c 3M /dev/zero > " + filepath.Join(dir, "big"), claim.Limits{FSize: 1 << 20}},
		{"hog", `x=$(head -c 200M /dev/zero | tr '\0' a); echo ${#x}`, claim.Limits{Memory: 32 << 20}},
	} {
		enqueue(t, s, claim.NewJob{ID: tt.id, Command: tt.command, MaxRetries: &one})
		w := newWorker(t, s)
		w.Config.Limits = tt.limits
		drain(t, w)
	}
	for id, want := range map[string]string{
		"spin": "cpu limit 1s exceeded",
		"big":  "file size limit 1M exceeded",
	} {
		if j := get(t, s, id); j.State != claim.Dead || j.LastError != want {
			t.Errorf("job %s is %s with error %q, want dead with %q", id, j.State, j.LastError, want)
		}
	}
	j := get(t, s, "hog")
	wantHog := "memory limit 32M is an address-space rlimit here"
	if runCgroup("probe") != "" && cgroupHasMemory() {
		wantHog = "memory limit 32M exceeded"
	}
	if j.State != claim.Dead || !strings.Contains(j.LastError, wantHog) {
		t.Errorf("job hog is %s with error %q, want dead with an error containing %q", j.State, j.LastError, wantHog)
	}
}

// cgroupHasMemory reports whether this process's cgroup delegates the
// memory controller to its children.
func cgroupHasMemory() bool {
	b, _ := os.ReadFile(filepath.Join(ownCgroup(), "cgroup.subtree_control"))
	return strings.Contains(string(b), "memory")
}

func TestRunCgroupIsKilledWhole(t *testing.T) {
	if runCgroup("probe") == "" {
		testenv.Missing(t, "no writable cgroup v2 directory here (run as root on a cgroup v2 system)")
	}
	s := mustOpenStore(t)
	w := newWorker(t, s)
	pidFile := filepath.Join(t.TempDir(), "pid")
	// setsid puts the sleeper out of the job's process group; only the
	// cgroup still holds it when the job's shell exits. A run with a memory
	// limit gets a cgroup of its own.
	w.Config.Limits = claim.Limits{Memory: 1 << 30}
	enqueue(t, s, claim.NewJob{ID: "escape", Command: "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > " + pidFile})
	drain(t, w)
	if j := get(t, s, "escape"); j.State != claim.Completed {
		t.Fatalf("job is %s (%s), want completed", j.State, j.LastError)
	}
	pid := strings.TrimSpace(readFile(t, pidFile))
	waitFor(t, "the escaped sleeper "+pid+" to be gone", func() bool {
		b, err := os.ReadFile("/proc/" + pid + "/cmdline")
		return err != nil || !strings.HasPrefix(string(b), "sleep")
	})
	entries, _ := filepath.Glob(filepath.Join(ownCgroup(), "queuectl-*-escape-*"))
	if len(entries) > 0 {
		t.Errorf("run cgroups left behind: %v", entries)
	}
}

func TestJobLimitsWinOverConfigDefaults(t *testing.T) {
	s := mustOpenStore(t)
	w := newWorker(t, s)
	w.Config.Limits = claim.Limits{NoFile: 64, FSize: 8 << 20}
	enqueue(t, s, claim.NewJob{ID: "own", Command: "cat /proc/self/limits", Limits: claim.Limits{NoFile: 100}})
	drain(t, w)
	out := readFile(t, filepath.Join(w.LogDir, "own", "1.out"))
	for _, want := range []string{`Max open files\s+100\s+100\s`, `Max file size\s+8388608\s+8388608\s`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the job's /proc/self/limits:\n%s\nwant a line matching %q", out, want)
		}
	}
	runs, err := s.Runs(t.Context(), "own")
	if err != nil || len(runs) != 1 || (runs[0].Confined != "rlimit" && runs[0].Confined != "cgroup+rlimit") {
		t.Errorf("run = %+v, %v; want it to say how its limits were set", runs, err)
	}
}

package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/internal/testenv"
)

// needTool returns the path of a tool a test runs. Without it the test is
// skipped on a laptop, and fails under CI=true, where .ci/run installs it.
func needTool(t *testing.T, name string) string {
	t.Helper()
	return testenv.LookPath(t, name, "see .ci/run")
}

// makeRun is one make process of TestMakeRunRecipe, its output streamed.
type makeRun struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	done   chan struct{}
	cancel context.CancelFunc
}

// heavyMake drives testdata/recipes/heavy.mk with make -j4 in a directory
// of logs. Q is a wrapper that notes each target's start ("start FILE") in
// events, beside the starts ("+ FILE") and ends ("- FILE") of COMPRESS,
// which stands in for xz: it waits until two compressions have started (so
// the queue's limit is certainly reached), fails on a log that says
// "corrupt", and while dir/armed exists it waits for dir/open before it ends.
type heavyMake struct {
	t      *testing.T
	h      *qhome
	make   string
	dir    string
	events string
}

func newHeavyMake(t *testing.T, h *qhome) *heavyMake {
	m := &heavyMake{t: t, h: h, make: needTool(t, "make"), dir: t.TempDir()}
	m.events = filepath.Join(m.dir, "events")
	compress := `#!/bin/sh
echo "+ $1" >>` + m.events + `
` + awaitStarts(m.events, "+ ", 2) + `
if grep -q corrupt "$1"; then echo "$1: corrupt input" >&2; echo "- $1" >>` + m.events + `; exit 7; fi
while [ -e ` + m.path("armed") + ` ] && [ ! -e ` + m.path("open") + ` ]; do sleep 0.02; done
cp "$1" "$1.xz"; echo "compressed $1"
echo "- $1" >>` + m.events + "\n"
	q := "#!/bin/sh\nfor last; do :; done\necho \"start $last\" >>" + m.events + "\nexec queuectl \"$@\"\n"
	for name, text := range map[string]string{"compress": compress, "q": q} {
		if err := os.WriteFile(m.path(name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func (m *heavyMake) path(name string) string { return filepath.Join(m.dir, name) }

// start runs make -j4 on heavy.mk over a fresh logs/ directory.
func (m *heavyMake) start(logs map[string]string) *makeRun {
	t := m.t
	t.Helper()
	makefile, err := filepath.Abs(filepath.Join(recipes, "heavy.mk"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range logs {
		if err := os.WriteFile(filepath.Join(work, "logs", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(m.events)
	ctx, cancel := context.WithTimeout(t.Context(), runLimit)
	r := &makeRun{out: &syncBuffer{}, done: make(chan struct{}), cancel: cancel}
	r.cmd = exec.CommandContext(ctx, m.make, "-j4", "-f", makefile, "COMPRESS="+m.path("compress"), "Q="+m.path("q"))
	r.cmd.Dir = work
	r.cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), "MAKEFLAGS"), "MAKELEVEL"), "QUEUECTL_HOME="+m.h.dir, "NO_COLOR=1")
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("make: %v", err)
	}
	go func() { r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// wait returns make's output and exit code once it ends.
func (r *makeRun) wait(t *testing.T) (string, int) {
	t.Helper()
	<-r.done
	r.cancel()
	out := r.out.String()
	if r.cmd.ProcessState.ExitCode() == -1 {
		t.Fatalf("make -j4: killed after %v\n%s", runLimit, out)
	}
	t.Logf("$ make -j4 -f heavy.mk  # exit %d\n%s", r.cmd.ProcessState.ExitCode(), out)
	return out, r.cmd.ProcessState.ExitCode()
}

// TestMakeRunRecipe runs testdata/recipes/heavy.mk with real make -j4
// against two worker processes (8 slots) while queue heavy is limited to
// 2: sampled from the jobs themselves, never more than 2 compressions run
// at once. Then with one corrupt log, make stops at the first failure: the
// failing job ran once (run makes one attempt), make saw the failure while
// the other targets' jobs still ran, and no target started after the
// failing job ended.
func TestMakeRunRecipe(t *testing.T) {
	h := newHome(t)
	m := newHeavyMake(t, h)
	h.must("queue", "set", "heavy", "--max-running", "2")
	h.start("worker", "start", "--count", "4", "--no-spool")
	h.start("worker", "start", "--count", "4", "--no-spool")

	logs := map[string]string{}
	for _, name := range strings.Fields("a b c d e f g h i j k l") {
		logs[name+".log"] = "fine\n"
	}
	out, code := m.start(logs).wait(t)
	if code != 0 {
		t.Fatalf("make -j4 with 12 good logs: exit %d, want 0\n%s", code, out)
	}
	for name := range logs {
		if !strings.Contains(out, "compressed logs/"+name+"\n") {
			t.Errorf("make output lacks the job's own output line for %s", name)
		}
	}
	if most := maxConcurrent(t, m.events, func(string) string { return "all" })["all"]; most != 2 {
		t.Errorf("at most %d compressions ran at once, want exactly the limit 2", most)
	}

	// The first four targets' jobs all run (the limit is make's -j), and
	// the good ones go on until make has said it saw the failure: no
	// target can end meanwhile, so whatever make starts after the failing
	// job ended, it started for no reason but a job still retried.
	h.must("queue", "set", "heavy", "--max-running", "4")
	if err := os.WriteFile(m.path("armed"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	logs["a.log"] = "corrupt\n"
	r := m.start(logs)
	waitFor(t, runLimit, "make to see the failure and wait for the running targets", func() bool {
		return strings.Contains(r.out.String(), "Waiting for unfinished jobs")
	})
	if err := os.WriteFile(m.path("open"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = r.wait(t)
	if code == 0 {
		t.Fatalf("make -j4 with a corrupt log: exit 0\n%s", out)
	}
	if !regexp.MustCompile(`make: \*\*\* \[\S+: logs/a\.log\.xz\] Error 7`).MatchString(out) {
		t.Errorf("make does not report the failed job's exit code 7:\n%s", out)
	}
	if !strings.Contains(out, "logs/a.log: corrupt input\n") {
		t.Errorf("make output lacks the failed job's stderr:\n%s", out)
	}
	events := readFile(t, m.events)
	if n := strings.Count(events, "+ logs/a.log\n"); n != 1 {
		t.Errorf("the failing job ran %d times, want once\n%s", n, events)
	}
	if _, after, _ := strings.Cut(events, "- logs/a.log\n"); strings.Contains(after, "start ") {
		t.Errorf("make started targets after the failing job ended:\n%s", events)
	}
}

// TestMakeRunWordsNotUTF8 runs, with real make, a recipe that gives
// queuectl run a file name that is not UTF-8 (Latin-1 "café"), through the
// front program and queuectl-full, both handing the job to a worker over
// its socket: each job is given the name's bytes, not U+FFFD, and prints
// the file.
func TestMakeRunWordsNotUTF8(t *testing.T) {
	mk := needTool(t, "make")
	h := newHome(t)
	h.startServing("--count", "2")
	dir := t.TempDir()
	files := map[string]string{
		"caf\xe9.txt": "the file named in Latin-1\n",
		"Makefile":    "all:\n\tqueuectl run -q -- cat *.txt\n\tqueuectl-full run -q -- cat *.txt\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, mk, "-s")
	cmd.Dir = dir
	cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), "MAKEFLAGS"), "MAKELEVEL"), "QUEUECTL_HOME="+h.dir, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if want := strings.Repeat(files["caf\xe9.txt"], 2); err != nil || string(out) != want {
		t.Fatalf("make: %v\n%s\nwant each job to print the file:\n%s", err, out, want)
	}
}

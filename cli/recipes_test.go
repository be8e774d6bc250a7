package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The recipes live in testdata/recipes, docs/make-and-cron.md quotes them
// word for word (TestDocsQuoteRecipes), and each test below runs one.

const recipes = "../testdata/recipes"

func readRecipe(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recipes, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDocsQuoteRecipes(t *testing.T) {
	page, err := os.ReadFile("../docs/make-and-cron.md")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(recipes)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if body := readRecipe(t, e.Name()); !strings.Contains(string(page), "\n"+body+"```\n") {
			t.Errorf("docs/make-and-cron.md does not quote %s/%s in a code block, word for word", recipes, e.Name())
		}
	}
}

// installBinary puts queuectl where the recipes expect `go install` to have
// put it: HOME/go/bin/queuectl.
func installBinary(t *testing.T, home string) string {
	t.Helper()
	bin, err := exec.LookPath("queuectl")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(home, "go", "bin", "queuectl")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// userHome is a fresh HOME whose queuectl home is the default ~/.queuectl.
func userHome(t *testing.T) (string, *qhome) {
	home := t.TempDir()
	return home, &qhome{t: t, dir: filepath.Join(home, ".queuectl")}
}

// TestMakefileRecipe runs testdata/recipes/Makefile as a user does: copied
// into a Go module, `make check` with no variables, exit 0 when its jobs
// complete; then, with a test that fails, non-zero when one dies.
func TestMakefileRecipe(t *testing.T) {
	makeBin, goBin := needTool(t, "make"), needTool(t, "go")
	recipe, err := os.ReadFile(filepath.Join(recipes, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"Makefile":    string(recipe),
		"go.mod":      "module example.com/app\n\ngo 1.21\n",
		"app.go":      "package app\n\nfunc Two() int { return 2 }\n",
		"app_test.go": "package app\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal(\"not 2\")\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := newHome(t)
	h.start("worker", "start", "--count", "2", "--no-spool")
	runMake := func(vars ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), runLimit)
		defer cancel()
		cmd := exec.CommandContext(ctx, makeBin, append([]string{"check"}, vars...)...)
		cmd.Dir = dir
		cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), "MAKEFLAGS"), "MAKELEVEL"), "QUEUECTL_HOME="+h.dir, "NO_COLOR=1",
			"PATH="+filepath.Dir(goBin)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("make check %v: still running after %v\n%s", vars, runLimit, out)
		}
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("make: %v", err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}

	out, code := runMake()
	if code != 0 {
		t.Fatalf("make check: exit %d, want 0\n%s", code, out)
	}
	var jobs []struct{ Command, Cwd string }
	if err := json.Unmarshal([]byte(h.must("list", "--json")), &jobs); err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, j := range jobs {
		cmds = append(cmds, j.Command+" in "+j.Cwd)
	}
	sort.Strings(cmds)
	if want := []string{"go test ./... in " + dir, "go vet ./... in " + dir}; !slices.Equal(cmds, want) {
		t.Errorf("make check ran %q, want %q", cmds, want)
	}

	out, code = runMake("TEST=echo 2 tests failed >&2; exit 1")
	if code == 0 {
		t.Fatalf("make with a job that dies: exit 0, want non-zero\n%s", out)
	}
	if !strings.Contains(out, "queuectl: error: dead: ") {
		t.Errorf("make output does not say which job died:\n%s", out)
	}
	if n := h.count("dead"); n != 1 {
		t.Errorf("%d dead jobs, want 1", n)
	}
}

// TestMakefileRecipeInterrupted: Ctrl-C (SIGINT to make's process group)
// during `make check` ends the wait of the recipe but not its jobs, which
// a worker runs: the output says they go on and gives the cancel that
// stops them, and that command cancels both. It said nothing, and left
// them running.
func TestMakefileRecipeInterrupted(t *testing.T) {
	makeBin := needTool(t, "make")
	recipe, err := os.ReadFile(filepath.Join(recipes, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), recipe, 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHome(t)
	h.start("worker", "start", "--count", "2", "--no-spool")
	cmd := exec.Command(makeBin, "check", "VET=sleep 600", "TEST=sleep 601")
	cmd.Dir = dir
	cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), "MAKEFLAGS"), "MAKELEVEL"), "QUEUECTL_HOME="+h.dir, "NO_COLOR=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the terminal's foreground group
	mk := h.startCmd(cmd)
	waitFor(t, 30*time.Second, "both jobs of make check to run", func() bool { return h.count("processing") == 2 })
	cancel := interruptRecipe(t, mk, "make check")
	if len(cancel) != 3 || cancel[0] != "cancel" {
		t.Fatalf("make check after Ctrl-C does not say how to stop its 2 jobs, which go on:\n%s", mk.stderr)
	}
	h.must(cancel...)
	for _, id := range cancel[1:] {
		if st := h.show(id).State; st != "canceled" {
			t.Errorf("job %s after the cancel make's output gave: %s, want canceled", id, st)
		}
	}
}

// TestPipelineRecipeInterrupted: Ctrl-C during `make release` of the
// pipeline recipe, whose wait waits for the last step alone, names the
// steps before it too, which go on as well: the cancel it gives stops
// every step. It named none, and then named only the last.
func TestPipelineRecipeInterrupted(t *testing.T) {
	makeBin := needTool(t, "make")
	makefile, err := filepath.Abs(filepath.Join(recipes, "pipeline.mk"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHome(t)
	h.start("worker", "start", "--count", "2", "--no-spool")
	cmd := exec.Command(makeBin, "-f", makefile, "-C", t.TempDir(), "FETCH=sleep 600", "LINUX=true", "MAC=true", "PACKAGE=true")
	cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), "MAKEFLAGS"), "MAKELEVEL"), "QUEUECTL_HOME="+h.dir, "NO_COLOR=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the terminal's foreground group
	mk := h.startCmd(cmd)
	cancel := interruptRecipe(t, mk, "make release")
	if len(cancel) != 5 || cancel[0] != "cancel" {
		t.Fatalf("make release after Ctrl-C does not say how to stop its 4 steps, which go on:\n%s", mk.stderr)
	}
	h.must(cancel...)
	if n := h.count("canceled"); n != 4 {
		t.Errorf("%d steps canceled by the cancel make's output gave, want 4\n%s", n, h.must("list"))
	}
}

// interruptRecipe waits until the wait of make's recipe watches its jobs,
// sends Ctrl-C to make's process group, and returns the queuectl command
// that make's output gives to stop the jobs that go on ("cancel ID...").
func interruptRecipe(t *testing.T, mk *proc, what string) []string {
	t.Helper()
	pgid := mk.cmd.Process.Pid // make leads its process group (Setpgid)
	waitFor(t, 30*time.Second, "the wait of "+what+" to watch its jobs", func() bool {
		return groupHolds(pgid, "wait", "anon_inode:inotify") // the store's wake file
	})
	if err := syscall.Kill(-pgid, syscall.SIGINT); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	if code := mk.exit(t, 30*time.Second); code == 0 {
		t.Fatalf("%s after Ctrl-C: exit 0, want non-zero\n%s%s", what, mk.stdout, mk.stderr)
	}
	var cancel []string
	for line := range strings.Lines(mk.stderr.String()) {
		if _, after, ok := strings.Cut(line, "stop them with: queuectl "); ok {
			cancel = strings.Fields(after)
		}
	}
	return cancel
}

// groupHolds reports whether a process of group pgid, run as `queuectl
// COMMAND …`, has a file descriptor whose link reads target.
func groupHolds(pgid int, command, target string) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, pgrp, ok := procStat(e.Name()); !ok || pgrp != strconv.Itoa(pgid) {
			continue
		}
		argv, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if args := strings.Split(string(argv), "\x00"); len(args) < 2 || args[1] != command {
			continue
		}
		fds, _ := filepath.Glob(filepath.Join("/proc", e.Name(), "fd", "*"))
		for _, fd := range fds {
			if link, _ := os.Readlink(fd); link == target {
				return true
			}
		}
	}
	return false
}

// cronCommands returns the commands of a crontab's job lines, as cron
// hands them to /bin/sh.
func cronCommands(t *testing.T, crontab string) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(crontab))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 {
			t.Fatalf("crontab line %q: want 5 time fields and a command", line)
		}
		// The command is the line after the 5th field.
		cmd := line
		for range 5 {
			cmd = strings.TrimLeft(cmd, " \t")
			cmd = cmd[strings.IndexAny(cmd, " \t"):]
		}
		cmd = strings.TrimSpace(cmd)
		if strings.Contains(strings.ReplaceAll(cmd, `\%`, ""), "%") {
			t.Fatalf("crontab line %q: cron turns an unescaped %% into a newline", line)
		}
		out = append(out, strings.ReplaceAll(cmd, `\%`, "%"))
	}
	return out
}

// TestCrontabRecipe runs the lines of testdata/recipes/crontab as cron
// would: /bin/sh, cron's PATH, no QUEUECTL_HOME.
func TestCrontabRecipe(t *testing.T) {
	cmds := cronCommands(t, readRecipe(t, "crontab"))
	if len(cmds) != 2 {
		t.Fatalf("crontab has %d job lines, want 2 (spool drop, purge)", len(cmds))
	}
	drop, purge := cmds[0], cmds[1]
	home, h := userHome(t)
	installBinary(t, home)
	if err := os.MkdirAll(filepath.Join(home, "notes"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "notes", "todo.txt"), []byte("buy milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.must("status") // the worker that normally runs has created the home
	cron := func(line string) string {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-c", line)
		cmd.Dir = home
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "SHELL=/bin/sh", "LOGNAME=cron"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("cron line %q: %v\n%s", line, err, out)
		}
		return string(out)
	}
	// The job's command uses $HOME, as the user's worker would see it.
	asUser := func(args ...string) string {
		t.Helper()
		cmd := h.command(args...)
		cmd.Env = append(cmd.Env, "HOME="+home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("queuectl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	cron(drop)
	asUser("ingest")
	// The next night, while the first backup still waits: skipped.
	cron(drop)
	if out := asUser("ingest"); !strings.Contains(out, "nightly-backup") {
		t.Errorf("ingest of an overlapping drop says %q, want a note about the unique key", out)
	}
	if n := h.count("pending"); n != 1 {
		t.Fatalf("%d pending jobs after two drops, want 1 (unique_key)", n)
	}
	if left, _ := filepath.Glob(filepath.Join(h.dir, "spool", "*.json*")); len(left) != 0 {
		t.Errorf("files left in spool/: %v", left)
	}
	asUser("worker", "start", "--drain", "--no-spool")
	if _, err := os.Stat(filepath.Join(home, "notes.tgz")); err != nil {
		t.Errorf("the backup job did not run: %v", err)
	}

	// Nothing is a week old yet: purge, made for cron, prints nothing, so
	// cron mails nothing.
	if out := cron(purge); out != "" {
		t.Errorf("purge line with nothing to purge printed %q, want nothing", out)
	}
	if n := h.count("completed"); n != 1 {
		t.Errorf("%d completed jobs after purging those older than a week, want 1", n)
	}
}

// unitFile parses a systemd unit's key=value lines by section.
func unitFile(t *testing.T, text string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			out[section] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("unit line %q is not KEY=VALUE in a section", line)
			}
			out[section][k] = v
		}
	}
	return out
}

// TestSystemdUnitRecipe checks testdata/recipes/queuectl.service, runs its
// ExecStart, and stops it the way systemd does (KillMode=mixed: SIGTERM to
// the worker only): the running job finishes and the worker exits 0.
func TestSystemdUnitRecipe(t *testing.T) {
	text := readRecipe(t, "queuectl.service")
	unit := unitFile(t, text)
	svc := unit["Service"]
	execStart := svc["ExecStart"]
	if !strings.HasPrefix(execStart, "%h/go/bin/queuectl worker start") {
		t.Errorf("ExecStart=%s, want %%h/go/bin/queuectl worker start …", execStart)
	}
	if svc["KillMode"] != "mixed" || svc["KillSignal"] != "SIGTERM" {
		t.Errorf("KillMode=%s KillSignal=%s; want mixed and SIGTERM, so that jobs are not signalled with the worker",
			svc["KillMode"], svc["KillSignal"])
	}
	if unit["Install"]["WantedBy"] != "default.target" {
		t.Errorf("WantedBy=%s, want default.target (a user unit)", unit["Install"]["WantedBy"])
	}

	home, h := userHome(t)
	installBinary(t, home)
	argv := strings.Fields(strings.ReplaceAll(execStart, "%h", home))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(withoutEnv(os.Environ(), "QUEUECTL_HOME"), "HOME="+home)
	worker := &proc{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = worker.stdout, worker.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { worker.err = cmd.Wait(); close(worker.done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-worker.done })

	g := newGate(t)
	h.must("enqueue", "--id", "gated", "--command", g.command())
	g.waitStarted(t)
	worker.signal(t, syscall.SIGTERM)
	waitFor(t, 30*time.Second, "the worker to say it is stopping", func() bool {
		return strings.Contains(worker.stderr.String(), "letting 1 running job(s) finish")
	})
	g.release(t)
	if code := worker.exit(t, 30*time.Second); code != 0 {
		t.Errorf("worker exit %d after SIGTERM, want 0\n%s", code, worker.stderr)
	}
	if j := h.show("gated"); j.State != "completed" {
		t.Errorf("job %s after a systemd stop, want completed", j.State)
	}

	verifyUnit(t, strings.ReplaceAll(text, "%h", home))
}

// verifyUnit runs `systemd-analyze verify` where it can.
func verifyUnit(t *testing.T, text string) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: unit not verified by systemd")
		return
	}
	path := filepath.Join(t.TempDir(), "queuectl.service")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	switch {
	case err == nil:
	case strings.Contains(string(out), "Failed to initialize manager"), strings.Contains(string(out), "Failed to setup working directory"):
		t.Logf("systemd-analyze cannot run here: unit not verified by systemd\n%s", out)
	default:
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestCompletionRecipe sources testdata/recipes/completion.bash in bash and
// in zsh's bash emulation, and `queuectl completion fish` in fish, and
// completes (a missing shell fails the test under CI=true).
func TestCompletionRecipe(t *testing.T) {
	h := newHome(t)
	script, err := filepath.Abs(filepath.Join(recipes, "completion.bash"))
	if err != nil {
		t.Fatal(err)
	}
	// `queuectl completion bash` prints the recipe; zsh adds bashcompinit.
	recipe := readRecipe(t, "completion.bash")
	if out := h.must("completion", "bash"); out != recipe {
		t.Errorf("queuectl completion bash printed\n%s\nwant the recipe\n%s", out, recipe)
	}
	if out := h.must("completion", "zsh"); !strings.HasSuffix(out, recipe) || !strings.Contains(out, "bashcompinit") {
		t.Errorf("queuectl completion zsh printed\n%s", out)
	}
	if out := h.must("completion", "fish"); !strings.Contains(out, "complete -c queuectl") {
		t.Errorf("queuectl completion fish printed\n%s", out)
	}
	h.must("enqueue", "--id", "nightly-db", "--queue", "mail", "--command", "true")
	h.must("enqueue", "--id", "hello", "--command", "true")
	tests := []struct{ line, want string }{
		{"queuectl dl", "dlq"},
		{"queuectl dlq r", "retry"},
		{"queuectl list --st", "--state"},
		{"queuectl ", "enqueue list logs purge show status wait completion version"},
		{"queuectl show ", "nightly-db hello"},
		{"queuectl wait hello ", "nightly-db"},
		{"queuectl logs n", "nightly-db"},
		{"queuectl list --state ", "pending failed dead"},
		{"queuectl worker start --queue ", "mail default"},
		{"queuectl config set ", "max-retries lease"},
		{"queuectl completion ", "bash zsh fish"},
		{"queuectl enqueue --", "--command --priority --queue"},
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script := script
		if shell == "fish" {
			script = completionScript(t, h, shell)
		}
		for _, tt := range tests {
			got := completeLine(t, h, shell, script, t.TempDir(), tt.line)
			for _, w := range strings.Fields(tt.want) {
				if !got[w] {
					t.Errorf("%s: complete %q = %v, want %s among them", shell, tt.line, got, w)
				}
			}
		}
	}
}

// fakeTool writes an executable script called name into dir that appends
// its arguments (one per line) and then its stdin to dir/name.out.
func fakeTool(t *testing.T, dir, name string) string {
	t.Helper()
	out := filepath.Join(dir, name+".out")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> " + out + "\ncat >> " + out + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// runRecipeLines runs a shell recipe with the home's queuectl on PATH.
func runRecipeLines(t *testing.T, h *qhome, recipe string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-e", "-c", readRecipe(t, recipe))
	cmd.Env = append(os.Environ(), "QUEUECTL_HOME="+h.dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", recipe, err, out)
	}
}

// TestNotifyRecipe sets the hooks of testdata/recipes/notify.sh and runs a
// job that completes and one that dies, with a fake notify-send on PATH.
func TestNotifyRecipe(t *testing.T) {
	h := newHome(t)
	runRecipeLines(t, h, "notify.sh")
	bin := t.TempDir()
	out := fakeTool(t, bin, "notify-send")
	h.must("enqueue", "--id", "fine", "--command", "true")
	h.must("enqueue", "--id", "broken", "--max-retries", "1", "--command", "echo '$(touch pwned)' >&2; exit 3")
	cmd := h.command("worker", "start", "--drain", "--no-spool")
	cmd.Env = append(cmd.Env, "PATH="+bin+":"+os.Getenv("PATH"))
	cmd.Dir = t.TempDir()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("worker: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"queuectl: fine completed\n",
		"--urgency=critical\nqueuectl: broken is dead\nexit status 3: $(touch pwned)\n",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("notify-send got:\n%s\nwant it to contain %q", got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "pwned")); err == nil {
		t.Error("a job's stderr was run as code by the hook")
	}
}

// TestMailOnDeadRecipe sets the hook of testdata/recipes/mail-on-dead.sh
// and lets a job die, with a fake sendmail on PATH.
func TestMailOnDeadRecipe(t *testing.T) {
	h := newHome(t)
	runRecipeLines(t, h, "mail-on-dead.sh")
	bin := t.TempDir()
	out := fakeTool(t, bin, "sendmail")
	h.must("enqueue", "--id", "nightly", "--max-retries", "2", "--backoff-base", "1", "--command", "echo disk full >&2; exit 1")
	h.must("enqueue", "--id", "fine", "--command", "true")
	cmd := h.command("worker", "start", "--drain", "--no-spool")
	cmd.Env = append(cmd.Env, "PATH="+bin+":"+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("worker: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	user, _ := exec.Command("id", "-un").Output()
	want := strings.TrimSpace(string(user)) + "\nSubject: queuectl: job nightly is dead\n\nexit status 1 after 2 runs\n\ndisk full\n"
	if string(got) != want {
		t.Errorf("sendmail got:\n%q\nwant (one mail, for the dead job only):\n%q", got, want)
	}
}

// TestPipelineRecipe runs testdata/recipes/pipeline.mk with make: fetch,
// then both builds, then package, each only once what it waits for
// completed; and make fails, with every later step dead, when fetch dies.
func TestPipelineRecipe(t *testing.T) {
	makeBin := needTool(t, "make")
	makefile, err := filepath.Abs(filepath.Join(recipes, "pipeline.mk"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHome(t)
	h.must("config", "set", "max-retries", "1")
	h.start("worker", "start", "--count", "2", "--no-spool")
	dir := t.TempDir()
	runMake := func(vars ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), runLimit)
		defer cancel()
		cmd := exec.CommandContext(ctx, makeBin, append([]string{"-f", makefile, "-C", dir, "TIMEOUT=2m"}, vars...)...)
		cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), "MAKEFLAGS"), "MAKELEVEL"), "QUEUECTL_HOME="+h.dir, "NO_COLOR=1")
		out, _ := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("make %v: still running after %v\n%s", vars, runLimit, out)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	// Each build checks that fetch ran before it; package, that both did.
	out, code := runMake("FETCH=echo fetch >> log",
		"LINUX=grep -q fetch log && sleep 0.2 && echo linux >> log",
		"MAC=grep -q fetch log && sleep 0.2 && echo mac >> log",
		"PACKAGE=grep -q linux log && grep -q mac log && echo package >> log")
	if code != 0 {
		t.Fatalf("make release: exit %d, want 0\n%s", code, out)
	}
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(log))
	if len(lines) != 4 || lines[0] != "fetch" || lines[3] != "package" {
		t.Errorf("steps ran as %v, want fetch, the two builds, package", lines)
	}

	// fetch dies after the later steps were enqueued: they die with it.
	out, code = runMake("FETCH=sleep 1; echo no network >&2; exit 1")
	if code == 0 {
		t.Fatalf("make release with a dying fetch: exit 0, want non-zero\n%s", out)
	}
	// Every step enqueued before fetch died died with it; a step enqueued
	// after was refused, which fails make as well.
	if dead, all := h.count("dead"), len(h.listAll()); dead < 2 || dead != all-4 {
		t.Errorf("%d dead of %d jobs after fetch died, want fetch and every step enqueued after it dead", dead, all)
	}
}

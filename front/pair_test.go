package front_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim/postgres/pgtest"
	"github.com/queuectl/queuectl/handoff"
	"github.com/queuectl/queuectl/internal/testenv"
)

// pair is the two programs as `go install ./...` installs them, side by
// side, and a home of their own.
type pair struct {
	t        *testing.T
	bin, dir string
	home     string
	env      []string // set for every command, before each call's own
}

func newPair(t *testing.T) *pair {
	goBin := testenv.LookPath(t, "go", "golang")
	dir := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	for out, pkg := range map[string]string{"queuectl": ".", "queuectl-full": "./cmd/queuectl-full"} {
		cmd := exec.Command(goBin, "build", "-o", filepath.Join(dir, out), pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	return &pair{t: t, bin: filepath.Join(dir, "queuectl"), dir: dir, home: filepath.Join(t.TempDir(), "home")}
}

func (p *pair) command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(p.bin, args...)
	// PATH without the programs: the front finds queuectl-full beside itself.
	cmd.Env = append(os.Environ(), "QUEUECTL_HOME="+p.home, "NO_COLOR=1", "PATH=/usr/bin:/bin")
	cmd.Env = append(append(cmd.Env, p.env...), env...)
	return cmd
}

// run runs the front with args and returns its stdout, stderr and exit code.
func (p *pair) run(env []string, args ...string) (string, string, int) {
	p.t.Helper()
	cmd := p.command(env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		p.t.Fatalf("queuectl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// startWorker starts a worker through the front and waits for its socket.
func (p *pair) startWorker() {
	p.t.Helper()
	if _, errs, code := p.run(nil, "status"); code != 0 {
		p.t.Fatalf("status: exit %d\n%s", code, errs)
	}
	w := p.command(nil, "worker", "start", "--no-spool")
	if err := w.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() {
		p.run(nil, "worker", "stop", "--wait")
		w.Wait()
	})
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(p.home, handoff.SocketName)); err == nil {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatal("the worker's socket never appeared")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFrontAndFull runs the real programs as installed: a worker, enqueue
// and run through the front to it, a command the front does not serve,
// --help, a usage error, and enqueue once no worker serves the home.
func TestFrontAndFull(t *testing.T) {
	p := newPair(t)
	p.startWorker()

	id, errs, code := p.run(nil, "enqueue", "-q", "--command", "echo hi")
	if code != 0 || !regexp.MustCompile(`^\S+\n$`).MatchString(id) {
		t.Fatalf("enqueue -q = %q, exit %d\n%s", id, code, errs)
	}
	if out, errs, code := p.run(nil, "wait", strings.TrimSpace(id)); code != 0 {
		t.Fatalf("wait: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := p.run(nil, "enqueue", `{"command": "true"}`); code != 0 || !strings.HasPrefix(out, "Enqueued job ") {
		t.Fatalf("enqueue JSON = %q, exit %d\n%s", out, code, errs)
	}
	if out, errs, code := p.run(nil, "run", "-q", "--", "echo", "hello world"); out != "hello world\n" || errs != "" || code != 0 {
		t.Fatalf("run -q = %q, %q, exit %d; want the output alone", out, errs, code)
	}
	// A job that dies: its output once, its start not told (it started at
	// once), its end told once, why it died, its exit code.
	out, errs, code := p.run(nil, "run", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
	if out != "out\n" || code != 3 || strings.Count("\n"+errs, "\nerr\n") != 1 ||
		strings.Contains(errs, "started") || strings.Count(errs, "attempt 1 failed") != 1 || !strings.Contains(errs, "is dead: run 1 exited 3") {
		t.Fatalf("run of a failing command = %q, exit %d\nstderr:\n%s", out, code, errs)
	}
	// A notice after a line the job left open on stderr starts its own.
	if _, errs, _ := p.run(nil, "run", "--", "sh", "-c", `printf 'progress 50%%' >&2; exit 5`); !strings.Contains(errs, "progress 50%\nqueuectl: job ") || strings.Contains(errs, "\n\n") {
		t.Errorf("run of a job leaving its stderr line open: stderr:\n%s", errs)
	}
	// Where stdout and stderr are one (a terminal, 2>&1), a line the job
	// left open on stdout is the one a notice would go on: ended first.
	both := &bytes.Buffer{}
	cmd := p.command(nil, "run", "--", "sh", "-c", `printf 'compiling... '; exit 5`)
	cmd.Stdout, cmd.Stderr = both, both
	if cmd.Run(); !strings.Contains(both.String(), "compiling... \nqueuectl: job ") || strings.Contains(both.String(), "\n\n") {
		t.Errorf("run 2>&1 of a job leaving its stdout line open: output:\n%s", both)
	}
	// With a label, every notice about the job names it: which target of
	// make -j a line is about.
	_, errs, code = p.run(nil, "run", "--label", "cc foo.o", "--", "sh", "-c", "exit 4")
	notices := regexp.MustCompile(`(?m)^queuectl: job .*$`).FindAllString(errs, -1)
	if code != 4 || len(notices) != 2 {
		t.Fatalf("run --label of a failing command: exit %d, %d notices\nstderr:\n%s", code, len(notices), errs)
	}
	for _, n := range notices {
		if !regexp.MustCompile(`^queuectl: job \S+ \(cc foo\.o\)`).MatchString(n) {
			t.Errorf("notice %q does not name the job's label", n)
		}
	}

	out, errs, code = p.run(nil, "status")
	if code != 0 || !regexp.MustCompile(`completed: 3\b`).MatchString(out) || !regexp.MustCompile(`dead: 4\b`).MatchString(out) {
		t.Fatalf("status = %q, exit %d\n%s", out, code, errs)
	}
	if out, _, code := p.run(nil, "enqueue", "--help"); code != 0 || !strings.Contains(out, "queuectl enqueue - add a job") {
		t.Fatalf("enqueue --help = %q, exit %d", out, code)
	}
	if _, errs, code := p.run(nil, "enqueue", "echo", "hi"); code != 2 || !strings.Contains(errs, "queuectl: error: usage: enqueue takes a job as JSON") {
		t.Fatalf("enqueue echo hi: exit %d\n%s", code, errs)
	}

	// enqueue -f: a file of one job is the front's, of two the full program's.
	one, two := filepath.Join(p.dir, "one.json"), filepath.Join(p.dir, "two.jsonl")
	os.WriteFile(one, []byte("{\"command\": \"true\"}\n"), 0o600)
	os.WriteFile(two, []byte("{\"command\": \"true\"}\n{\"command\": \"true\"}\n"), 0o600)
	for file, want := range map[string]int{one: 1, two: 2} {
		out, errs, code := p.run(nil, "enqueue", "-q", "-f", file)
		if ids := strings.Fields(out); code != 0 || len(ids) != want {
			t.Errorf("enqueue -q -f %s = %q, exit %d, want %d ids\n%s", filepath.Base(file), out, code, want, errs)
		}
	}

	full, err := exec.Command(filepath.Join(p.dir, "queuectl-full"), "--version").Output()
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		if out, errs, code := p.run(nil, args...); out != string(full) || err != nil || code != 0 {
			t.Errorf("queuectl %s = %q, exit %d, %s; want queuectl-full's %q (%v)", args[0], out, code, errs, full, err)
		}
	}

	if _, errs, code := p.run(nil, "worker", "stop", "--wait"); code != 0 {
		t.Fatalf("worker stop: exit %d\n%s", code, errs)
	}
	if id, errs, code := p.run(nil, "enqueue", "-q", "-c", "true"); code != 0 || id == "" {
		t.Fatalf("enqueue with no worker = %q, exit %d\n%s", id, code, errs)
	}
}

// TestFrontInitsNothingHeavy: an enqueue the front hands to a worker runs
// no package initialisation of the store engines, the table renderer or
// the command tree (GODEBUG=inittrace=1 prints one line per package init).
func TestFrontInitsNothingHeavy(t *testing.T) {
	p := newPair(t)
	p.startWorker()
	out, errs, code := p.run([]string{"GODEBUG=inittrace=1"}, "enqueue", "-q", "--command", "true")
	if code != 0 || out == "" {
		t.Fatalf("enqueue = %q, exit %d\n%s", out, code, errs)
	}
	noHeavyInits(t, errs)
}

// TestFrontHandsPostgresJobsToItsWorker: on a PostgreSQL store too, the
// front hands enqueue and run to its home's worker, however the call's URL
// differs from the worker's in what each client keeps to itself (a
// password; the pool size a worker sets): the call neither runs
// queuectl-full nor opens the store.
func TestFrontHandsPostgresJobsToItsWorker(t *testing.T) {
	dsn := pgtest.DSN(t)
	p := newPair(t)
	p.env = []string{"QUEUECTL_DB=" + dsn}
	p.startWorker()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "not-needed") // the test server trusts
	spelt := []string{"GODEBUG=inittrace=1", "QUEUECTL_DB=" + u.String()}
	out, errs, code := p.run(spelt, "enqueue", "-q", "--command", "true")
	if code != 0 || out == "" {
		t.Fatalf("enqueue = %q, exit %d\n%s", out, code, errs)
	}
	noHeavyInits(t, errs)
	out, errs, code = p.run(spelt, "run", "-q", "--", "echo", "through the worker")
	if code != 0 || out != "through the worker\n" {
		t.Fatalf("run = %q, exit %d\n%s", out, code, errs)
	}
	noHeavyInits(t, errs)
}

// noHeavyInits fails t when the inittrace lines in errs show the init of
// a store, engine, table renderer or command tree: queuectl-full ran.
func noHeavyInits(t *testing.T, errs string) {
	t.Helper()
	heavy := regexp.MustCompile(`tablewriter|modernc\.org|jackc/pgx|golang\.org/x/text|urfave/cli|queuectl/(cli|report|claim/sqlite|claim/postgres)\b`)
	inits := 0
	sc := bufio.NewScanner(strings.NewReader(errs))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "init" {
			continue
		}
		inits++
		if heavy.MatchString(f[1]) {
			t.Errorf("the front ran the init of %s", f[1])
		}
	}
	if inits == 0 {
		t.Fatalf("no inittrace lines on stderr:\n%s", errs)
	}
}

// TestFrontLinksNothingHeavy: the front's import graph holds no store,
// engine, table renderer, command tree, spool watcher nor worker, and no
// net (its client is handoff/wire's plain socket, not handoff's): package
// initialisation runs for all a binary links, and the runtime's start grows
// with its size, whatever the command uses.
func TestFrontLinksNothingHeavy(t *testing.T) {
	heavy := regexp.MustCompile(`^((database/sql|regexp|net|crypto/rand|math/big|log|net/http|text/template|html/template|` +
		`github\.com/(robfig/cron|fsnotify|olekukonko|urfave/cli|jackc)|modernc\.org|golang\.org/x/text)(/|$)|` +
		`github\.com/queuectl/queuectl/(claim|claim/sqlite|claim/postgres|cli|report|serve|spool|run|bench|handoff)$)`)
	for _, pkg := range frontDeps(t, "0") {
		if heavy.MatchString(pkg) {
			t.Errorf("the front links %s", pkg)
		}
	}
}

// TestFrontStaysStaticWithCgo: a front built with cgo on, as a plain
// `go install` on a machine with a C compiler builds it, links no cgo
// (os/user's lookups and net's resolver are cgo's there), so it remains a
// static binary that starts without the dynamic loader (~1 ms of CPU a
// call on a virtual machine, where the loader's CPU probes trap).
func TestFrontStaysStaticWithCgo(t *testing.T) {
	for _, pkg := range frontDeps(t, "1") {
		if pkg == "runtime/cgo" || pkg == "os/user" || pkg == "net" {
			t.Errorf("the front links %s with cgo on", pkg)
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	// And the program itself: built with cgo on, it asks for no dynamic
	// loader (no PT_INTERP program header).
	bin := filepath.Join(t.TempDir(), "queuectl")
	if out, err := goCommand(t, "1", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build with cgo on: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the front built with cgo on asks for a dynamic loader")
		}
	}
}

// frontDeps lists the packages the front links (go list -deps of the
// module's root package) with CGO_ENABLED=cgo.
func frontDeps(t *testing.T, cgo string) []string {
	t.Helper()
	out, err := goCommand(t, cgo, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	return strings.Fields(string(out))
}

// goCommand is the go command with args in the module's root, with
// CGO_ENABLED=cgo.
func goCommand(t *testing.T, cgo string, args ...string) *exec.Cmd {
	t.Helper()
	goBin := testenv.LookPath(t, "go", "golang")
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = filepath.Dir(filepath.Dir(file))
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
	return cmd
}

// TestFrontWithoutFull: a front installed without queuectl-full says so,
// and how to install both.
func TestFrontWithoutFull(t *testing.T) {
	p := newPair(t)
	alone := filepath.Join(t.TempDir(), "queuectl")
	data, err := os.ReadFile(p.bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	p.bin = alone
	// A PATH with no queuectl-full on it either: /usr/bin has one where
	// the package is installed.
	_, errs, code := p.run([]string{"PATH=" + t.TempDir()}, "status")
	if code != 1 || !strings.Contains(errs, "queuectl: error: run queuectl-full") || !strings.Contains(errs, "queuectl: hint: install both programs") {
		t.Errorf("status without queuectl-full: exit %d\n%s", code, errs)
	}
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/queuectl/queuectl/claim/postgres/pgtest"
	"github.com/queuectl/queuectl/front"
	"github.com/queuectl/queuectl/internal/testenv"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain makes this test binary double as queuectl: testscript puts a copy
// named queuectl on PATH, and scripts and process tests run it for real.
//
// Most tests run one after the other. A few call t.Parallel: those that
// spend most of their time waiting (a lease to lapse, an outage, a
// PostgreSQL server of their own to crash and restart: a fifth of their
// time on the CPU, or less) and TestManyHosts, the longest, which keeps a
// core busy; they run after the others, two at a time (-parallel defaults
// to GOMAXPROCS), so the waits overlap the work on a 2-core machine. Each
// has a store, a home and hostnames of its own.
func TestMain(m *testing.M) {
	// Built with -race, every run of queuectl would sleep 1 s before it
	// exits (the race runtime's atexit_sleep_ms), and the tests run it
	// hundreds of times. Races are still reported, and still fail the run.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	full := func() { os.Exit(Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr)) }
	testscript.Main(owned{m}, map[string]func(){"queuectl": func() {
		// As installed: the front program serves what it serves and execs
		// queuectl-full (found on PATH: this binary again) for the rest,
		// with the same arguments; fullInTest tells the copy it is that.
		if _, ok := os.LookupEnv(fullInTest); ok {
			os.Unsetenv(fullInTest)
			full()
		}
		os.Setenv(fullInTest, "1")
		os.Exit(front.Main(os.Args))
	}, "queuectl-full": full})
}

// owned runs the tests as the owner of what they start (testenv.Own):
// first it stops the workers, jobs and servers that an earlier run of
// this binary left when it was killed past its -timeout.
type owned struct{ m *testing.M }

func (o owned) Run() int {
	if stopped := testenv.Own(); len(stopped) > 0 {
		fmt.Fprintf(os.Stderr, "stopped %d process(es) a killed test run left: %v\n", len(stopped), stopped)
	}
	// Run directly in the background of a script (`cli.test &`; go test
	// catches SIGINT itself, so the binaries it starts get it at its
	// default), this process ignores SIGINT, and so would every process it
	// starts, which then leave a SIGINT alone (stopSignals): the tests that
	// send one would fail. Caught here, SIGINT is back to its default in
	// them, as at a terminal; this process still ends on it.
	if signal.Ignored(syscall.SIGINT) {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT)
		go func() { <-ch; os.Exit(130) }()
	}
	if raceEnabled {
		if dir, ok := plainBinaries(); ok {
			defer os.RemoveAll(dir)
			os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
			raceBinaries = false
		}
	}
	return o.m.Run()
}

// raceBinaries: the queuectl processes the tests start are built with
// -race. Under -race they are not, unless QUEUECTL_TEST_RACE_BINARIES=1
// (plainBinaries).
var raceBinaries = raceEnabled

// plainBinaries builds queuectl and queuectl-full without -race, as README
// installs them, into a new directory, for a test binary built with -race
// to put on PATH before its own copy. The race runtime makes every one of
// the thousands of processes the tests start several times slower, start
// and all, and it took the package's run in CI from minutes to most of
// an hour. Races are still looked for in every package's own tests (the
// worker's in run, the store's in claim, the commands' here, in process);
// QUEUECTL_TEST_RACE_BINARIES=1 runs the processes as race builds too. ok
// is false, said on stderr, when go cannot build them: the tests then run
// this binary.
func plainBinaries() (dir string, ok bool) {
	if os.Getenv("QUEUECTL_TEST_RACE_BINARIES") == "1" {
		return "", false
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintf(os.Stderr, "go not found (%v): the processes run as race builds\n", err)
		return "", false
	}
	dir, err = os.MkdirTemp("", "queuectl-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "build queuectl: %v: the processes run as race builds\n", err)
		return "", false
	}
	cmd := exec.Command(gobin, "build", "-buildvcs=false", "-tags", "urfave_cli_no_docs", "-o", dir+string(os.PathSeparator),
		"github.com/queuectl/queuectl", "github.com/queuectl/queuectl/cmd/queuectl-full")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		fmt.Fprintf(os.Stderr, "build queuectl: %v\n%s: the processes run as race builds\n", err, out)
		return "", false
	}
	return dir, true
}

// fullInTest is set in the environment of a queuectl-full the front execs
// in these tests, where both are this binary under the name queuectl.
const fullInTest = "QUEUECTL_TEST_FULL"

// TestScripts runs the end-to-end scripts in testdata/script against the
// real binary, each in a fresh home.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:         "testdata/script",
		WorkdirRoot: t.TempDir(), // removed by the test, also when -run leaves no script to run
		Setup: func(env *testscript.Env) error {
			env.Setenv("QUEUECTL_HOME", env.WorkDir+"/home")
			env.Setenv(testenv.OwnerEnv, os.Getenv(testenv.OwnerEnv))
			env.Setenv("NO_COLOR", "1")
			env.Setenv("GORACE", os.Getenv("GORACE"))
			return nil
		},
		Cmds:                scriptCmds,
		Condition:           engineCondition(false),
		RequireExplicitExec: true,
	})
}

var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"exitcode": cmdExitcode,
}

// cmdExitcode runs a command and checks its exact exit code, keeping its
// stdout and stderr for the stdout/stderr commands that follow:
//
//	exitcode 2 queuectl list --state nope
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// TestScriptsPostgres runs the same scripts with the store in PostgreSQL
// (a schema of its own per script), but for those about the SQLite file.
func TestScriptsPostgres(t *testing.T) {
	server := pgtest.Server(t)
	testscript.Run(t, testscript.Params{
		Dir:         "testdata/script",
		WorkdirRoot: t.TempDir(),
		Setup: func(env *testscript.Env) error {
			dsn, drop, err := pgtest.NewSchema(server)
			if err != nil {
				return err
			}
			env.Defer(func() {
				if err := drop(); err != nil {
					env.T().Fatal(err)
				}
			})
			env.Setenv("QUEUECTL_HOME", env.WorkDir+"/home")
			env.Setenv(testenv.OwnerEnv, os.Getenv(testenv.OwnerEnv))
			env.Setenv("QUEUECTL_DB", dsn)
			env.Setenv("NO_COLOR", "1")
			env.Setenv("GORACE", os.Getenv("GORACE"))
			return nil
		},
		Cmds:                scriptCmds,
		Condition:           engineCondition(true),
		RequireExplicitExec: true,
	})
}

// engineCondition gives scripts the condition [postgres]: whether the
// store is in PostgreSQL (QUEUECTL_DB) rather than a file in the home.
func engineCondition(postgres bool) func(string) (bool, error) {
	return func(cond string) (bool, error) {
		if cond == "postgres" {
			return postgres, nil
		}
		return false, fmt.Errorf("unknown condition %q", cond)
	}
}

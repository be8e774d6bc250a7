// Package front is the queuectl program users run. It serves the two
// commands that Make recipes and shell loops call once per job, `enqueue`
// and `run`, by handing the job to the worker serving the home's socket
// (package handoff), and runs the full program, queuectl-full, for
// everything else: any other command, any flag or form it does not know,
// --help, completion, and any call no worker serves. It links no store
// engine, no table renderer and no command tree, so that a call to a
// running worker starts as fast as a small Go program can.
//
// The full program answers for every behaviour a user sees: the front
// answers only when the worker took the job, and then writes exactly what
// the full program writes for it. When the outcome is not the plain one
// (the worker's answer is lost, it stops following a run, a run's job
// died and must be explained), the front execs the full program with the
// same arguments and a Resume, which tells it which job was handed over
// and what of its output was written already.
package front

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
	"github.com/queuectl/queuectl/handoff/wire"
)

// FullName is the full program's file name: found beside the front's own
// executable, else on PATH.
const FullName = "queuectl-full"

// Main runs queuectl with args (args[0] is the program name). It returns
// an exit code only when it served the call itself; otherwise it replaces
// the process with the full program.
func Main(args []string) int {
	if _, resumed := os.LookupEnv(ResumeEnv); resumed {
		return Full(args, nil) // a call begun already: the full program's
	}
	if len(args) == 2 && (args[1] == "--version" || args[1] == "-v" || args[1] == "version") {
		if _, err := fmt.Printf("queuectl version %s\n", VersionText()); err != nil {
			return 1
		}
		return 0
	}
	if c, ok := parse(args); ok {
		if code, done := c.serve(); done {
			return code
		}
	}
	return Full(args, nil)
}

// Full execs the full program with args, this process's environment and,
// when r is not nil, the Resume of a job handed over already. It returns
// only when the full program cannot be run.
func Full(args []string, r *Resume) int {
	env := os.Environ()
	if r != nil {
		env = append(env, r.env())
	}
	path, err := fullPath()
	if err == nil {
		err = syscall.Exec(path, args, env)
	}
	fmt.Fprintf(os.Stderr, "queuectl: error: run %s: %v\n", FullName, err)
	fmt.Fprintf(os.Stderr, "queuectl: hint: install both programs side by side, as README says: CGO_ENABLED=0 go install -tags urfave_cli_no_docs . ./cmd/queuectl-full (in a checkout)\n")
	return 1
}

func fullPath() (string, error) {
	if self, err := os.Executable(); err == nil {
		path := filepath.Join(filepath.Dir(self), FullName)
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			return path, nil
		}
	}
	return exec.LookPath(FullName)
}

// serve hands the call's job to the home's worker; done is false when
// the full program must serve the call instead.
func (c *call) serve() (code int, done bool) {
	sock, db, ok := Socket(c.home, c.db)
	if !ok {
		return 0, false
	}
	nj, ok := c.job()
	if !ok {
		return 0, false
	}
	if nj.ID == "" {
		nj.ID = jobs.NewID(time.Now())
	}
	start := time.Now()
	if c.name == "run" {
		return c.run(sock, db, nj, start)
	}
	b, outcome, err := wire.EnqueueBrief(sock, db, nj)
	switch {
	case errors.Is(err, wire.ErrUnknown):
		return Full(c.args, &Resume{ID: nj.ID, Start: start}), true
	case err != nil:
		return 0, false
	}
	return printEnqueued(b, outcome, c.quiet), true
}

// printEnqueued writes what the full program writes for one job enqueued.
func printEnqueued(j wire.Brief, outcome jobs.Outcome, quiet bool) int {
	if outcome == jobs.Skipped {
		fmt.Fprintf(os.Stderr, "queuectl: skipped: job %s with unique key %q is %s\n", j.ID, j.UniqueKey, j.State)
	}
	var err error
	switch { // without fmt, whose first use costs an enqueue more than this
	case quiet:
		_, err = os.Stdout.WriteString(j.ID + "\n")
	case outcome == jobs.Created:
		_, err = os.Stdout.WriteString("Enqueued job " + j.ID + "\n")
	case outcome == jobs.Redriven:
		_, err = os.Stdout.WriteString("Re-drove dead job " + j.ID + "\n")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "queuectl: error: %v\n", err)
		return 1
	}
	return 0
}

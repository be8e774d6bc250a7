package run

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/queuectl/queuectl/claim"
	"golang.org/x/sys/unix"
)

// notStarted is the result of a job whose process could not start (err).
func notStarted(run context.Context, err error) result {
	switch {
	case errors.Is(context.Cause(run), errCanceled):
		return result{canceled: true, err: "canceled before it started"}
	case fencedBy(run) != nil:
		return result{lost: true, err: "not started: " + fencedBy(run).Error()}
	case run.Err() != nil:
		return result{interrupted: true, err: "interrupted by worker shutdown"}
	case envFault(err):
		return result{fault: fmt.Sprintf("start: %v", err)}
	}
	return result{err: fmt.Sprintf("start: %v", err)}
}

// exited is how a started job's process ended: what waiting for it
// returned, whether its timeout fired, whether its confinement killed it
// for its memory.
type exited struct {
	err                 error
	timedOut, oomKilled bool
}

// judge is the result of a job that started and has exited as x says.
func (w *Worker) judge(run context.Context, j claim.Job, r claim.Run, cmd *exec.Cmd, conf *confinement, x exited) result {
	res := result{exitCode: exitCode(cmd)}
	if conf != nil {
		res.confinedBy = conf.via
	}
	switch {
	case errors.Is(context.Cause(run), errCanceled):
		w.awaitGroup(cmd.Process.Pid)
		res.canceled, res.err = true, "canceled"
	case fencedBy(run) != nil:
		w.awaitGroup(cmd.Process.Pid)
		res.lost, res.err = true, "killed: "+fencedBy(run).Error()
	case run.Err() != nil:
		res.interrupted, res.err = true, "interrupted by worker shutdown"
	case x.timedOut:
		res.err = fmt.Sprintf("timed out after %v", j.Timeout)
	case x.err == nil:
	case conf.explain(cmd.ProcessState, x.oomKilled) != "":
		res.err = conf.explain(cmd.ProcessState, x.oomKilled)
	case signaled(cmd) && w.leaseExpired(run, j.ID, r.Attempt):
		res.lost, res.err = true, describeExit(x.err)+" (lease expired)"
	default:
		res.err = describeExit(x.err) + conf.memoryNote()
	}
	return res
}

func signaled(cmd *exec.Cmd) bool {
	if cmd.ProcessState == nil { // the wait failed
		return false
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

func exitCode(cmd *exec.Cmd) *int {
	if cmd.ProcessState == nil {
		return nil
	}
	code := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	return &code
}

func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + signalName(ws.Signal())
		}
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error()
}

// signalName names a signal the way kill(1) does: KILL, TERM, SEGV.
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return strings.TrimPrefix(name, "SIG")
	}
	return strconv.Itoa(int(sig))
}

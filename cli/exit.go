package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/run"
	"github.com/urfave/cli/v2"
)

// Exit codes, SPEC §5. exitMeanings says what each means; docs/cli.md
// repeats that table word for word (TestExitCodesInDocs) and --help
// prints it.
const (
	exitOK          = 0   // success
	exitFailure     = 1   // runtime error, or a waited-for job is dead
	exitUsage       = 2   // usage error or invalid input
	exitNotFound    = 3   // no such job
	exitConflict    = 4   // duplicate id, or the job is in the wrong state
	exitTimeout     = 124 // wait timed out
	exitInterrupted = 130 // interrupted (second signal)
)

// exitMeanings is the exit-code table, in order.
var exitMeanings = []struct {
	code    int
	meaning string
}{
	{exitOK, "success"},
	{exitFailure, "runtime error, or a job `wait` waited for is dead"},
	{exitUsage, "usage error or invalid input (bad JSON, unknown state, bad config value)"},
	{exitNotFound, "no such job"},
	{exitConflict, "conflict: duplicate id, or the job is in the wrong state"},
	{exitTimeout, "`wait` (or `worker stop --wait`) timed out"},
	{exitInterrupted, "interrupted: a worker stopped by a second signal, or a command by Ctrl-C"},
}

// exitTable renders exitMeanings for --help, one code a line.
func exitTable() string {
	var b strings.Builder
	for _, e := range exitMeanings {
		fmt.Fprintf(&b, "   %3d  %s\n", e.code, strings.ReplaceAll(e.meaning, "`", ""))
	}
	return b.String()
}

// exitCode prints err as `queuectl: error: …` (and a hint where the fix is
// known) and maps it to the exit codes above.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var coded *exitStatus
	if errors.As(err, &coded) && coded.err == nil {
		return coded.code
	}
	if !errors.As(err, &coded) && errors.Is(err, context.Canceled) {
		// Only a signal cancels c.Context: a read it cut short is the
		// Ctrl-C the user gave, not an error to report.
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "queuectl: error: %v\n", err)
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		fmt.Fprintf(stderr, "queuectl: hint: %s\n", h.Hint())
	}
	switch {
	case errors.As(err, &coded):
		return coded.code
	case errors.Is(err, errUsage), errors.Is(err, claim.ErrInvalid):
		return exitUsage
	case errors.Is(err, claim.ErrNotFound):
		return exitNotFound
	case errors.Is(err, claim.ErrConflict):
		return exitConflict
	case errors.Is(err, run.ErrInterrupted), errors.Is(err, context.Canceled):
		return exitInterrupted // context.Canceled: only a signal cancels c.Context
	}
	return exitFailure
}

// errUsage marks command-line mistakes (exit 2).
var errUsage = errors.New("usage")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// givenTwice ends a usage error that asks for one of two or three ways of
// naming jobs (ids, --queue, --all): ", not both" (", only one of them")
// when more than one was given, nothing when none was.
func givenTwice(given ...bool) string {
	n := 0
	for _, g := range given {
		if g {
			n++
		}
	}
	switch {
	case n < 2:
		return ""
	case len(given) == 2:
		return ", not both"
	}
	return ", only one of them"
}

// hinted carries the fix for an error, printed as `queuectl: hint: …`.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }

func (h *hinted) Hint() string { return h.hint }

func (h *hinted) Unwrap() error { return h.err }

func withHint(err error, hint string) error { return &hinted{err, hint} }

// exitStatus is an exit code chosen by a command; err nil means the command
// already said what there was to say.
type exitStatus struct {
	code int
	err  error
}

func (e *exitStatus) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitStatus) Unwrap() error { return e.err }

// endedBy is a command's exit that Main turns into the end of the process
// by signal, once the command's store is closed: `run` after a hangup dies
// of SIGHUP, as the command it stood in for would have (front.Die).
type endedBy struct {
	status *exitStatus
	signal syscall.Signal
}

func (e endedBy) Error() string { return e.status.Error() }
func (e endedBy) Unwrap() error { return e.status }

// eachID applies fn to every id, going on past failures. Each error is
// printed in turn, and the first decides the exit code.
func eachID(c *cli.Context, ids []string, fn func(string) error) error {
	code := exitOK
	for _, id := range ids {
		if err := fn(id); err != nil {
			if n := exitCode(err, c.App.ErrWriter); code == exitOK {
				code = n
			}
		}
	}
	if code == exitOK {
		return nil
	}
	return &exitStatus{code, nil}
}

// eachJob is eachID over jobs: each of refs is resolved first (an id, a
// unique prefix of one, or @last; see claim.Store.Resolve), and fn gets the
// job's id.
func eachJob(c *cli.Context, h *home, refs []string, fn func(id string) error) error {
	return eachID(c, refs, func(ref string) error {
		id, err := h.store.Resolve(c.Context, ref)
		if err != nil {
			return err
		}
		return fn(id)
	})
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

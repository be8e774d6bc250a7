package front

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Interrupted is the cause of a context that Interrupts ended: the signal
// that came, or SIGPIPE when a write of the job's output found no reader.
type Interrupted struct{ Signal syscall.Signal }

func (i Interrupted) Error() string { return "interrupted by " + signalName(i.Signal) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return "SIGINT"
}

// Interrupts returns a context that ends, with an Interrupted cause, when
// `run` must stop following its job as if the command it stands in for
// had been stopped: Ctrl-C or SIGTERM; SIGHUP, the terminal gone (unless
// the process started with it ignored, as under nohup, which then keeps
// the job); SIGPIPE, the reader of its output gone. Notified, SIGPIPE
// makes a write to a closed pipe fail with EPIPE instead of killing the
// process first, so that the job can be canceled (OutputWriter).
func Interrupts(parent context.Context) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case s := <-ch:
			cancel(Interrupted{s.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// OutputError is the cause of a follow ended by a write of the job's
// output that failed other than for a closed pipe (a full disk, say).
type OutputError struct{ Err error }

func (e OutputError) Error() string { return "write the job's output: " + e.Err.Error() }
func (e OutputError) Unwrap() error { return e.Err }

// OutputWriter is w for a job's output: the first write that fails ends
// the follow (cancel, with Interrupted{SIGPIPE} for a closed pipe, else
// an OutputError), and every write after it is dropped, so that the job's
// end can still be read while it is canceled.
func OutputWriter(w io.Writer, cancel context.CancelCauseFunc) io.Writer {
	var failed bool
	return writerFunc(func(p []byte) (int, error) {
		if failed {
			return len(p), nil
		}
		if _, err := w.Write(p); err != nil {
			failed = true
			if errors.Is(err, syscall.EPIPE) {
				cancel(Interrupted{syscall.SIGPIPE})
			} else {
				cancel(OutputError{err})
			}
		}
		return len(p), nil
	})
}

// IsInterruption reports whether cause, of a follow's context, is an
// Interrupted or an OutputError: the job is to be canceled.
func IsInterruption(cause error) bool {
	return errors.As(cause, new(Interrupted)) || errors.As(cause, new(OutputError))
}

// InterruptedExit is the exit of a run interrupted by cause, once its job
// is canceled: as the command it stands in for would have ended, by
// SIGHUP after a hangup, and 141 (what a shell reports for a process that
// SIGPIPE ended) when its reader went away; 1, said on stderr, for output
// that could not be written; else 130, for Ctrl-C and SIGTERM (SPEC §5).
func InterruptedExit(cause error) int {
	var out OutputError
	if errors.As(cause, &out) {
		fmt.Fprintf(os.Stderr, "queuectl: error: %v\n", out)
		return 1
	}
	var in Interrupted
	errors.As(cause, &in)
	switch in.Signal {
	case syscall.SIGHUP:
		// With its handler reset, the Go runtime ends the process by it.
		signal.Reset(syscall.SIGHUP)
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		time.Sleep(time.Second)
		return 128 + int(syscall.SIGHUP)
	case syscall.SIGPIPE:
		// Not re-raised: the runtime ends a process by SIGPIPE only on a
		// write to a closed standard output or error.
		return 128 + int(syscall.SIGPIPE)
	}
	return 130
}

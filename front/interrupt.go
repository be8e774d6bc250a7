package front

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
)

// InterruptIgnored and HangupIgnored: SIGINT and SIGHUP were ignored when
// the process started (a background command of a script; nohup). Read
// before any of them is caught: once caught, a signal is no longer
// ignored.
var (
	InterruptIgnored = signal.Ignored(syscall.SIGINT)
	HangupIgnored    = signal.Ignored(syscall.SIGHUP)
	quitIgnored      = signal.Ignored(syscall.SIGQUIT)
	stopIgnored      = signal.Ignored(syscall.SIGTSTP)
)

// Interrupted is the cause of a context that Interrupts ended: the signal
// that came, or SIGPIPE when a write of the job's output found no reader.
type Interrupted struct{ Signal syscall.Signal }

func (i Interrupted) Error() string { return "interrupted: " + i.Signal.String() }

// Interrupts returns a context that ends, with an Interrupted cause, when
// `run` must stop following its job as if the command it stands in for
// had been stopped: SIGTERM; Ctrl-C (SIGINT), Ctrl-\ (SIGQUIT) and SIGHUP,
// the terminal gone, unless the process started with the signal ignored,
// as the command would have: under nohup, SIGHUP; as a background command
// of a non-interactive shell (`cmd &` in a script), SIGINT and SIGQUIT, so
// that a Ctrl-C meant for the script's foreground leaves it and its job
// running.
// SIGPIPE is caught too, only so that a write to a closed pipe fails with
// EPIPE instead of killing the process: the reader of the job's output
// gone is told by OutputWriter, from a write of that output, not by the
// signal, which any socket may raise. stop ends the watch.
func Interrupts(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := []os.Signal{syscall.SIGTERM, syscall.SIGPIPE}
	if !InterruptIgnored {
		sigs = append(sigs, syscall.SIGINT)
	}
	if !HangupIgnored {
		sigs = append(sigs, syscall.SIGHUP)
	}
	if !quitIgnored {
		sigs = append(sigs, syscall.SIGQUIT)
	}
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, sigs...)
	go func() {
		for {
			select {
			case s := <-ch:
				if s != syscall.SIGPIPE {
					cancel(Interrupted{s.(syscall.Signal)})
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// Suspendable is a followed job whose processes run's Ctrl-Z stops
// (wire.Stream).
type Suspendable interface {
	Suspend() error
	Continue() error
}

// Suspender makes Ctrl-Z (SIGTSTP) stop `run` with its job, as it would
// stop the command run stands in for: run asks the worker that follows
// its job to stop the job's processes (Follow), stops itself, and once it
// is continued (fg, bg) lets them go on. A job followed in the store
// (its worker on another host) goes on while run is stopped. A process
// that started with SIGTSTP ignored is not stopped by it, nor is its job.
type Suspender struct {
	mu      sync.Mutex
	job     Suspendable   // nil: none
	learned chan struct{} // a job is being handed over (Expect): closed by Follow
	waiting bool          // a Ctrl-Z waits for Follow, for tests
	stop    func()        // stops the process until it is continued
	wait    time.Duration // how long a Ctrl-Z waits for the hand-off's answer
}

// handOffWait bounds how long a Ctrl-Z waits for the answer of a hand-off
// in flight: an answer comes in milliseconds, and a worker that does not
// answer (run says so after slowAnswer) must not keep the terminal from
// its Ctrl-Z; run then stops alone, as it did before the hand-off.
const handOffWait = time.Second

// Suspends starts the watch for Ctrl-Z; it lasts as long as the process.
// run stops itself with SIGSTOP (stopSelf): once the runtime caught
// SIGTSTP, that no longer stops the process, even with the watch stopped.
func Suspends() *Suspender {
	s := &Suspender{stop: stopSelf, wait: handOffWait}
	if stopIgnored {
		return s
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTSTP)
	go func() {
		for range ch {
			s.suspend()
		}
	}()
	return s
}

// suspend is one Ctrl-Z: the job's processes stop, then run, until it is
// continued. One that comes while a job is handed over waits for the
// hand-off's answer (handOffWait at most): the worker may have started the
// job already, and it stops with run.
func (s *Suspender) suspend() {
	s.mu.Lock()
	learned := s.learned
	s.waiting = learned != nil
	s.mu.Unlock()
	if learned != nil {
		t := time.NewTimer(s.wait)
		select {
		case <-learned:
		case <-t.C:
		}
		t.Stop()
	}
	s.mu.Lock()
	s.waiting = false
	job := s.job
	s.mu.Unlock()
	if job != nil {
		job.Suspend()
	}
	s.stop()
	if job != nil {
		job.Continue()
	}
}

// Expect says that a job is being handed over to a worker, which may start
// it before run learns of it: a Ctrl-Z meanwhile waits until Follow says
// which job, or none.
func (s *Suspender) Expect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.learned == nil {
		s.learned = make(chan struct{})
	}
}

// Follow makes Ctrl-Z stop job's processes as well (nil: none), and ends
// an Expect.
func (s *Suspender) Follow(job Suspendable) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.job = job
	if s.learned != nil {
		close(s.learned)
		s.learned = nil
	}
}

// OutputError is the cause of a follow ended by a write of the job's
// output that failed other than for a closed pipe (a full disk, say).
type OutputError struct{ Err error }

func (e OutputError) Error() string { return "write the job's output: " + e.Err.Error() }
func (e OutputError) Unwrap() error { return e.Err }

// OutputWriter is w for a job's output: the first write that fails ends
// the follow (cancel, with Interrupted{SIGPIPE} for a closed pipe,
// Interrupted{SIGHUP} for EIO on a terminal, which hung up, else an
// OutputError: EIO on a file is a failing disk), and every write after it
// is dropped, so that the job's end can still be read while it is
// canceled. Whether w is a terminal is asked now: a terminal that hung up
// answers no ioctl.
func OutputWriter(w io.Writer, cancel context.CancelCauseFunc) io.Writer {
	var failed bool
	f, isFile := w.(*os.File)
	tty := isFile && isatty.IsTerminal(f.Fd())
	return writerFunc(func(p []byte) (int, error) {
		if failed {
			return len(p), nil
		}
		if _, err := w.Write(p); err != nil {
			failed = true
			switch {
			case errors.Is(err, syscall.EPIPE):
				cancel(Interrupted{syscall.SIGPIPE})
			case tty && errors.Is(err, syscall.EIO):
				cancel(Interrupted{syscall.SIGHUP})
			default:
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

// OutputGone reports whether cause says the job's output could not be
// written: then run fails (Exit) even when its job had finished.
func OutputGone(cause error) bool {
	var in Interrupted
	return errors.As(cause, new(OutputError)) || errors.As(cause, &in) &&
		in.Signal != syscall.SIGINT && in.Signal != syscall.SIGTERM && in.Signal != syscall.SIGQUIT
}

// Exit is how a run interrupted by cause ends, once its job is canceled:
// as the command it stands in for would have. After Ctrl-C or a hangup it
// dies of SIGINT or SIGHUP (sig, for Die once the caller has cleaned up),
// which a shell reports as 130 or 129: a shell that waits for a command
// ended by SIGINT stops too (a loop of `queuectl run` in a script ends at
// the first Ctrl-C), where one that exits 130 is taken for a command that
// handled it, and the loop goes on. When its reader went away it exits 141,
// what a shell reports for a process that SIGPIPE ended (the runtime ends
// a process by SIGPIPE only on a write to its standard output or error, so
// it is not re-raised); after Ctrl-\ it exits 131, as a shell reports a
// process that SIGQUIT ended; an output that could not be written
// otherwise exits 1 with err to say; else 130, for SIGTERM (SPEC §5).
func Exit(cause error) (code int, sig syscall.Signal, err error) {
	var out OutputError
	if errors.As(cause, &out) {
		return 1, 0, out
	}
	var in Interrupted
	errors.As(cause, &in)
	switch in.Signal {
	case syscall.SIGHUP, syscall.SIGINT:
		return 128 + int(in.Signal), in.Signal, nil
	case syscall.SIGPIPE, syscall.SIGQUIT:
		// SIGQUIT re-raised would end the process in the runtime's
		// goroutine dump: the code a shell gives a process it ended says it.
		return 128 + int(in.Signal), 0, nil
	}
	return 130, 0, nil
}

// Die ends the process by sig, as its default action would: with its
// handler reset, the Go runtime does. It returns only if sig did not end
// the process within a second, and at once as the first process of a PID
// namespace (a container without an init), which the kernel keeps from a
// signal at its default action: the caller then exits with its code.
func Die(sig syscall.Signal) {
	if os.Getpid() == 1 {
		return
	}
	signal.Reset(sig)
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second)
}

package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/queuectl/queuectl/front"
)

// stages returns the two contexts of SPEC §5's shutdown: soft is cancelled
// by the first of sigs (stop claiming, finish running jobs; its cause is a
// front.Interrupted), hard by the
// second (stop running jobs). Both end with parent. stop undoes the signal
// handling and waits for nothing: the goroutine it ends owns no resource.
// A command that stopped of itself as a first signal stops it (a worker
// that `worker stop` asked) says so with stoppedOfItself(hard): the next
// signal is then the second.
func stages(parent context.Context, sigs ...os.Signal) (soft, hard context.Context, stop func()) {
	var first atomic.Bool // the first stage is past: by a signal, or of itself
	hard, cancelHard := context.WithCancel(context.WithValue(parent, firstStageKey{}, &first))
	soft, cancelSoft := context.WithCancelCause(hard)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				if !first.Swap(true) {
					// The signal is the cause: what ends on soft ends as
					// that signal would have ended it (front.Exit).
					cancelSoft(front.Interrupted{Signal: sig.(syscall.Signal)})
				} else {
					cancelHard()
				}
			case <-done:
				return
			}
		}
	}()
	return soft, hard, func() {
		signal.Stop(ch)
		close(done)
		cancelSoft(nil)
		cancelHard()
	}
}

// firstStageKey holds, in stages' contexts, whether the first stage is past.
type firstStageKey struct{}

// stoppedOfItself tells the stages of ctx (hard, or a context below it)
// that the command stopped as a first signal stops it, without one: a
// worker that `worker stop` asked says "signal again to stop them now",
// and one signal then does. Outside stages (tests) it does nothing.
func stoppedOfItself(ctx context.Context) {
	if first, ok := ctx.Value(firstStageKey{}).(*atomic.Bool); ok {
		first.Store(true)
	}
}

// survivePipe catches SIGPIPE, for good, and drops it: a write to a stderr
// whose reader went away (`worker start --drain 2>&1 | head`, a log
// collector restarted) then fails with EPIPE, which the event log
// ignores, instead of ending the process by SIGPIPE with its jobs
// half-run. Caught, not ignored: the jobs and hooks it starts get SIGPIPE
// at its default, as an ignored signal would stay ignored in them.
var survivePipe = sync.OnceFunc(func() {
	dropped := make(chan os.Signal, 1)
	signal.Notify(dropped, syscall.SIGPIPE)
	go func() {
		for range dropped {
		}
	}()
})

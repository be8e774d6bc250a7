package run

import (
	"context"
	"os"
	"os/signal"
)

// TwoStage returns two contexts for a worker's shutdown: soft is cancelled
// by the first of sigs (stop claiming, finish running jobs), hard by the
// second (stop running jobs). release undoes the signal handling.
func TwoStage(parent context.Context, sigs ...os.Signal) (soft, hard context.Context, release func()) {
	hard, cancelHard := context.WithCancel(parent)
	soft, cancelSoft := context.WithCancel(hard)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case <-ch:
				if n == 0 {
					cancelSoft()
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
		cancelSoft()
		cancelHard()
	}
}

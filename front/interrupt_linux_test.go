package front

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/queuectl/queuectl/internal/testenv"
)

// A failed write of the job's output is a hangup only on a terminal: EIO
// from a file (a failing disk) is an error to report, not a signal.
func TestOutputWriterTellsAHangupFromAFailingDisk(t *testing.T) {
	master, tty := testenv.OpenPTY(t)
	defer tty.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	w := OutputWriter(tty, cancel)
	master.Close() // the terminal hangs up: writes fail with EIO
	w.Write([]byte("lost\n"))
	var in Interrupted
	if cause := context.Cause(ctx); !errors.As(cause, &in) || in.Signal != syscall.SIGHUP {
		t.Errorf("cause after a write to a hung-up terminal = %v, want SIGHUP", cause)
	}

	ctx, cancel = context.WithCancelCause(context.Background())
	w = OutputWriter(writerFunc(func([]byte) (int, error) { return 0, syscall.EIO }), cancel)
	w.Write([]byte("lost\n"))
	if cause := context.Cause(ctx); !errors.As(cause, new(OutputError)) || !errors.Is(cause, syscall.EIO) {
		t.Errorf("cause after EIO from a file = %v, want an OutputError", cause)
	}
}

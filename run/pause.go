package run

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/queuectl/queuectl/claim"
)

// Pauses are enforced by the claim statement (claim.Store.Pause): a worker
// need not know of them to honour them. It watches them only to say so.

// pauseNotes remembers which of the worker's queues were paused when last
// looked at, so that it speaks only when that changes.
type pauseNotes struct {
	mu     sync.Mutex
	paused []string
	known  bool
}

// notePauses says on the worker's log when its queues become paused or are
// resumed: at start, and after store changes.
func (w *Worker) notePauses(ctx context.Context) {
	all, err := w.Store.Paused(ctx)
	if err != nil {
		return // said by whoever next fails on the store
	}
	now := claim.PausedOf(all, w.Queues)
	w.pauses.mu.Lock()
	before, known := w.pauses.paused, w.pauses.known
	w.pauses.paused, w.pauses.known = now, true
	w.pauses.mu.Unlock()
	if known && slices.Equal(before, now) {
		return
	}
	switch {
	case len(now) > 0:
		w.emit(Event{Kind: EventPaused, Queues: now})
	case known:
		w.emit(Event{Kind: EventResumed, Queues: before})
	}
}

func pausedWords(queues []string) string {
	if len(queues) == 1 && queues[0] == claim.AllQueues {
		return "every queue"
	}
	return "queue " + strings.Join(queues, ", ")
}

// resumeCommand is the command that resumes queues: resume takes one
// --queue (given twice it is refused), so several queues are several
// commands; a bare resume would resume every queue, also those paused on
// purpose.
func resumeCommand(queues []string) string {
	if len(queues) == 0 || slices.Contains(queues, claim.AllQueues) {
		return "queuectl resume"
	}
	return "queuectl resume --queue " + strings.Join(queues, " && queuectl resume --queue ")
}

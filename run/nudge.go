package run

import "sync"

// Nudges tells the Tails of the worker's own process at once when their
// job starts or ends: a claim wakes nobody through the store, and the end
// of a run reaches a Tail only on its next tick. Fire it from
// Worker.Events; the zero Nudges is ready to use.
type Nudges struct {
	mu    sync.Mutex
	watch map[string]map[chan struct{}]struct{}
}

// Watch returns a channel that receives when job id's events fire, for
// Tail.Nudge, and the function that stops the watch.
func (n *Nudges) Watch(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.watch == nil {
		n.watch = map[string]map[chan struct{}]struct{}{}
	}
	if n.watch[id] == nil {
		n.watch[id] = map[chan struct{}]struct{}{}
	}
	n.watch[id][ch] = struct{}{}
	return ch, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.watch[id], ch)
		if len(n.watch[id]) == 0 {
			delete(n.watch, id)
		}
	}
}

// Fire nudges the watches of e's job, if any.
func (n *Nudges) Fire(e Event) {
	if e.Job == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch := range n.watch[e.Job] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

package run

import (
	"slices"
	"sync"

	"github.com/queuectl/queuectl/claim"
)

// Nudges tells the Tails of the worker's own process at once when their
// job starts or ends: a claim wakes nobody through the store, and the end
// of a run reaches a Tail only on its next tick. Fire it from
// Worker.Events, and Start from Worker.Starts; the zero Nudges is ready to
// use.
//
// A start comes with the job and its run as the slot claimed them, so that
// a Tail writes the start without reading the store (Watch.Started); the
// end is read, as the store recorded it. A job whose events fired shortly
// before its watch began is nudged at once (the recent ones are kept), so
// that a Tail that begins from the job as enqueued (Tail.From) misses no
// start.
type Nudges struct {
	mu     sync.Mutex
	watch  map[string][]*Watch
	recent [recentJobs]string // the jobs whose events fired last, watched or not
	next   int
}

// recentJobs is how many of the last jobs with events Nudges keeps: far
// more than a follow's start waits for (a slot's claim of the job just
// enqueued), far fewer than costs a look.
const recentJobs = 64

// Watch is one watch of a job: C receives when the job's events fired.
type Watch struct {
	C  <-chan struct{}
	c  chan struct{}
	n  *Nudges
	id string
	// Under n.mu: the start Start told, until it is taken or another event
	// fires, and the number of the last run Start told.
	start   *TailEvent
	started int
}

// Watch returns a watch of job id's events, for Tail.Watch; Stop ends it.
func (n *Nudges) Watch(id string) *Watch {
	c := make(chan struct{}, 1)
	w := &Watch{C: c, c: c, n: n, id: id}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.watch == nil {
		n.watch = map[string][]*Watch{}
	}
	n.watch[id] = append(n.watch[id], w)
	if slices.Contains(n.recent[:], id) {
		c <- struct{}{}
	}
	return w
}

// Stop ends the watch.
func (w *Watch) Stop() {
	n := w.n
	n.mu.Lock()
	defer n.mu.Unlock()
	n.watch[w.id] = slices.DeleteFunc(n.watch[w.id], func(o *Watch) bool { return o == w })
	if len(n.watch[w.id]) == 0 {
		delete(n.watch, w.id)
	}
}

// Started takes the job and the run that started, as the slot claimed
// them, when no other event of the job fired since Start told them: they
// stand for one read of the job, the one Start's nudge asks for.
func (w *Watch) Started() (TailEvent, bool) {
	w.n.mu.Lock()
	defer w.n.mu.Unlock()
	s := w.start
	if s == nil {
		return TailEvent{}, false
	}
	w.start = nil
	return *s, true
}

// Fire nudges the watches of e's job, if any: to read the job in the
// store, but for the start of a run that Start told already.
func (n *Nudges) Fire(e Event) {
	if e.Job == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.saw(e.Job)
	for _, w := range n.watch[e.Job] {
		if e.Kind == EventStarted && e.Run == w.started {
			continue
		}
		w.start = nil
		w.nudge()
	}
}

// Start nudges the watches of j with its run r, which is starting: the
// job and run as the slot claimed them. Call it before Fire gets the
// run's EventStarted.
func (n *Nudges) Start(j claim.Job, r claim.Run) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.saw(j.ID)
	for _, w := range n.watch[j.ID] {
		w.start, w.started = &TailEvent{Job: j, Run: r}, r.Attempt
		w.nudge()
	}
}

func (n *Nudges) saw(id string) {
	if n.recent[(n.next+recentJobs-1)%recentJobs] == id {
		return
	}
	n.recent[n.next] = id
	n.next = (n.next + 1) % recentJobs
}

func (w *Watch) nudge() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

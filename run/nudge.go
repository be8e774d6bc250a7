package run

import (
	"bytes"
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
// before its watch began is nudged at once, with its start if that was
// the last (the recent ones are kept), so that a Tail that begins from the
// job as enqueued (Tail.From) misses nothing.
type Nudges struct {
	mu     sync.Mutex
	watch  map[string][]*Watch
	recent [recentJobs]recentJob // the jobs whose events fired last, watched or not
	next   int
}

// recentJob is a job whose events fired lately, and the start Start told
// of it, until another event fired.
type recentJob struct {
	id    string
	start *TailEvent
}

// recentJobs is how many of the last jobs with events Nudges keeps: far
// more than a follow's start waits for (a slot's claim of the job just
// enqueued), far fewer than costs a look.
const recentJobs = 64

// Watch is one watch of a job: C receives when the job's events fired,
// Out when output came (Output).
type Watch struct {
	C   <-chan struct{}
	Out <-chan struct{}
	c   chan struct{}
	out chan struct{}
	n   *Nudges
	id  string
	// Under n.mu: the start Start told, until it is taken or another event
	// fires, and the number of the last run Start told; the output that
	// came and was not taken, its size, and whether any was dropped.
	start   *TailEvent
	started int
	parts   []Part
	queued  int
	dropped bool
	// unrecorded: the run that ended and waits to be recorded, told by
	// Unrecorded and not taken yet.
	unrecorded *Unrecorded
}

// Unrecorded is a run that ended but whose end cannot be recorded yet (a
// full disk), as its worker knows it: its exit code, error and the tails
// of its output it holds (Worker.Unrecorded).
type Unrecorded struct {
	Run claim.Run
	Err error // the store's
}

// Part is a part of a run's output as the worker copied it to the run's
// log file: of run Run, stream 0 (stdout) or 1 (stderr), at Off there.
type Part struct {
	Run    int
	Stream int
	Off    int64
	Data   []byte
}

// maxQueued bounds the output a watch holds for its Tail: past it, parts
// are dropped, and the Tail reads them from the files.
const maxQueued = 1 << 20

// Watch returns a watch of job id's events, for Tail.Watch; Stop ends it.
func (n *Nudges) Watch(id string) *Watch {
	c, out := make(chan struct{}, 1), make(chan struct{}, 1)
	w := &Watch{C: c, Out: out, c: c, out: out, n: n, id: id}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.watch == nil {
		n.watch = map[string][]*Watch{}
	}
	n.watch[id] = append(n.watch[id], w)
	if i := slices.IndexFunc(n.recent[:], func(r recentJob) bool { return r.id == id }); i >= 0 {
		if s := n.recent[i].start; s != nil {
			w.start, w.started = s, s.Run.Attempt
		}
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
	n.saw(e.Job, nil, e.Kind != EventStarted)
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
	start := &TailEvent{Job: j, Run: r}
	n.saw(j.ID, start, false)
	for _, w := range n.watch[j.ID] {
		w.start, w.started = start, r.Attempt
		w.nudge()
	}
}

// Output hands the watches of job, if any, a part of its run's output
// (Worker.Output); p is copied.
func (n *Nudges) Output(job string, run, stream int, off int64, p []byte) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ws := n.watch[job]
	if len(ws) == 0 {
		return
	}
	part := Part{Run: run, Stream: stream, Off: off, Data: bytes.Clone(p)}
	for _, w := range ws {
		if w.queued+len(p) > maxQueued {
			w.dropped = true
		} else {
			w.parts = append(w.parts, part)
			w.queued += len(p)
		}
		select {
		case w.out <- struct{}{}:
		default:
		}
	}
}

// Unrecorded tells the watches of j that its run r ended, but that its
// end waits to be recorded (err: why). Fire it from Worker.Unrecorded.
func (n *Nudges) Unrecorded(j claim.Job, r claim.Run, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, w := range n.watch[j.ID] {
		w.unrecorded = &Unrecorded{Run: r, Err: err}
		w.nudge()
	}
}

// Unrecorded takes the run Nudges.Unrecorded told of, if any.
func (w *Watch) Unrecorded() (Unrecorded, bool) {
	w.n.mu.Lock()
	defer w.n.mu.Unlock()
	u := w.unrecorded
	if u == nil {
		return Unrecorded{}, false
	}
	w.unrecorded = nil
	return *u, true
}

// unrecordedRun is Unrecorded for a Tail's Watch, which may be nil.
func (w *Watch) unrecordedRun() (Unrecorded, bool) {
	if w == nil {
		return Unrecorded{}, false
	}
	return w.Unrecorded()
}

// Output takes the output that came since it was last taken, in the order
// it came, and whether any was dropped meanwhile (it is in the files).
func (w *Watch) Output() (parts []Part, dropped bool) {
	w.n.mu.Lock()
	defer w.n.mu.Unlock()
	parts, dropped = w.parts, w.dropped
	w.parts, w.queued, w.dropped = nil, 0, false
	return parts, dropped
}

// saw notes that job id's events fired: a start (start), another event
// (ended: the start told last is no longer the job as it is), or the
// EventStarted of a start told already (neither).
func (n *Nudges) saw(id string, start *TailEvent, ended bool) {
	if i := slices.IndexFunc(n.recent[:], func(r recentJob) bool { return r.id == id }); i >= 0 {
		switch {
		case start != nil:
			n.recent[i].start = start
		case ended:
			n.recent[i].start = nil
		}
		return
	}
	n.recent[n.next] = recentJob{id: id, start: start}
	n.next = (n.next + 1) % recentJobs
}

func (w *Watch) nudge() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

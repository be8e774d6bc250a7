package run

import (
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// A watch receives its job's events, once however many fired before it
// was read, and none of another job's or after it stopped.
func TestNudges(t *testing.T) {
	var n Nudges
	a := n.Watch("a")
	other := n.Watch("b")
	defer other.Stop()
	n.Fire(Event{Kind: EventStarted, Job: "a", Run: 1})
	n.Fire(Event{Kind: EventCompleted, Job: "a", Run: 1})
	nudged(t, "a after a's events", a, true)
	nudged(t, "a again, for events fired before the first nudge was read", a, false)
	nudged(t, "b, by a's events", other, false)
	a.Stop()
	n.Fire(Event{Kind: EventStarted, Job: "a", Run: 2})
	nudged(t, "a after its watch stopped", a, false)
	if len(n.watch) != 1 {
		t.Errorf("%d jobs watched after a's watch stopped, want 1", len(n.watch))
	}
}

// A start told with its job and run stands for one read: the watch takes
// it once, its EventStarted nudges no more, and any later event of the
// job drops a start not taken.
func TestNudgesStart(t *testing.T) {
	var n Nudges
	w := n.Watch("a")
	defer w.Stop()
	j, r := claim.Job{ID: "a", Runs: 1, State: claim.Processing}, claim.Run{JobID: "a", Attempt: 1}
	n.Start(j, r)
	n.Fire(Event{Kind: EventStarted, Job: "a", Run: 1})
	nudged(t, "a after its start", w, true)
	if s, ok := w.Started(); !ok || s.Job.ID != "a" || s.Run.Attempt != 1 || s.Ended {
		t.Fatalf("Started = %+v, %v; want run 1 of a, not ended", s, ok)
	}
	if _, ok := w.Started(); ok {
		t.Error("a start was taken twice")
	}
	nudged(t, "a by the EventStarted of a start told already", w, false)

	n.Start(claim.Job{ID: "a", Runs: 2}, claim.Run{JobID: "a", Attempt: 2})
	n.Fire(Event{Kind: EventCompleted, Job: "a", Run: 2})
	nudged(t, "a after its second run's start and end", w, true)
	if s, ok := w.Started(); ok {
		t.Errorf("Started after the run's end = %+v: the end must be read", s)
	}
}

// A watch of a job whose events fired just before it began is nudged at
// once: its Tail, begun from the job as enqueued, reads what it missed.
func TestNudgesRecent(t *testing.T) {
	var n Nudges
	n.Start(claim.Job{ID: "early", Runs: 1}, claim.Run{JobID: "early", Attempt: 1})
	for i := range recentJobs - 1 {
		n.Fire(Event{Kind: EventCompleted, Job: string(rune('A' + i))})
	}
	w := n.Watch("early")
	defer w.Stop()
	nudged(t, "a job started just before its watch", w, true)
	n.Fire(Event{Kind: EventCompleted, Job: "pushes early out"})
	late := n.Watch("early")
	defer late.Stop()
	nudged(t, "a job whose start is no longer recent", late, false)
}

func nudged(t *testing.T, what string, w *Watch, want bool) {
	t.Helper()
	select {
	case <-w.C:
		if !want {
			t.Errorf("nudged: %s", what)
		}
	default:
		if want {
			t.Errorf("not nudged: %s", what)
		}
	}
}

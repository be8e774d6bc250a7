package run

import "testing"

// A watch receives its job's events, once however many fired before it
// was read, and none of another job's or after it stopped.
func TestNudges(t *testing.T) {
	var n Nudges
	ch, stop := n.Watch("a")
	other, stopOther := n.Watch("b")
	defer stopOther()
	n.Fire(Event{Kind: EventStarted, Job: "a"})
	n.Fire(Event{Kind: EventCompleted, Job: "a"})
	select {
	case <-ch:
	default:
		t.Fatal("watch of a: no nudge after a's events")
	}
	select {
	case <-ch:
		t.Fatal("watch of a: a second nudge for events fired before the first was read")
	case <-other:
		t.Fatal("watch of b: nudged by a's events")
	default:
	}
	stop()
	n.Fire(Event{Kind: EventStarted, Job: "a"})
	select {
	case <-ch:
		t.Fatal("a stopped watch was nudged")
	default:
	}
	if len(n.watch) != 1 {
		t.Errorf("%d jobs watched after a's watch stopped, want 1", len(n.watch))
	}
}

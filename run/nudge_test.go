package run

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
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
	if s, ok := w.Started(); !ok || s.Run.Attempt != 1 {
		t.Errorf("the start of a job started just before its watch: %+v, %v", s, ok)
	}
	n.Start(claim.Job{ID: "ended", Runs: 1}, claim.Run{JobID: "ended", Attempt: 1})
	n.Fire(Event{Kind: EventStarted, Job: "ended", Run: 1})
	n.Fire(Event{Kind: EventCompleted, Job: "ended", Run: 1})
	ended := n.Watch("ended")
	defer ended.Stop()
	nudged(t, "a job that started and ended just before its watch", ended, true)
	if s, ok := ended.Started(); ok {
		t.Errorf("the start of a job that ended since: %+v", s)
	}
	for i := range recentJobs - 1 {
		n.Fire(Event{Kind: EventCompleted, Job: string(rune('a' + i))})
	}
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

// Output reaches the watches of its job in the order it came, copied; past
// maxQueued a watch drops parts and says so once taken.
func TestNudgesOutput(t *testing.T) {
	var n Nudges
	n.Output("a", 1, 0, 0, []byte("unwatched")) // no watch: nothing kept
	w := n.Watch("a")
	defer w.Stop()
	buf := []byte("out")
	n.Output("a", 1, 0, 0, buf)
	n.Output("a", 1, 1, 0, []byte("err"))
	buf[0] = 'X' // the worker's buffer, used again
	select {
	case <-w.Out:
	default:
		t.Fatal("no nudge on Out after output")
	}
	parts, dropped := w.Output()
	if dropped || len(parts) != 2 || string(parts[0].Data) != "out" || parts[0].Stream != 0 || string(parts[1].Data) != "err" || parts[1].Stream != 1 {
		t.Fatalf("Output = %+v, %v; want out then err", parts, dropped)
	}
	big := make([]byte, maxQueued/2+1)
	n.Output("a", 1, 0, 3, big)
	n.Output("a", 1, 0, 3+int64(len(big)), big)
	if parts, dropped := w.Output(); !dropped || len(parts) != 1 {
		t.Errorf("past maxQueued: %d parts, dropped %v; want 1 and true", len(parts), dropped)
	}
	if parts, dropped := w.Output(); dropped || len(parts) != 0 {
		t.Errorf("taken again: %d parts, dropped %v", len(parts), dropped)
	}
}

// A part is written after what its file holds before it and was not
// written yet, and only what of it was not written already.
func TestRunLogsPart(t *testing.T) {
	dir := t.TempDir()
	r := claim.Run{Host: HostID(), Attempt: 1, StdoutPath: filepath.Join(dir, "1.out"), StderrPath: filepath.Join(dir, "1.err")}
	if err := os.WriteFile(r.StdoutPath, []byte("abcdefgh"), 0o600); err != nil {
		t.Fatal(err)
	}
	var l runLogs
	defer l.close()
	l.open(r)
	var got bytes.Buffer
	for _, p := range []Part{
		{Run: 1, Off: 3, Data: []byte("def")},  // after abc, from the file
		{Run: 1, Off: 0, Data: []byte("abc")},  // written already
		{Run: 1, Off: 4, Data: []byte("efgh")}, // gh is new
	} {
		if err := l.part(p, &got); err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != "abcdefgh" || !l.live {
		t.Errorf("parts wrote %q (live %v), want abcdefgh", got.String(), l.live)
	}
	if err := l.copy(&got, io.Discard); err != nil || got.String() != "abcdefgh" {
		t.Errorf("copy after the parts: %q, %v; want nothing more", got.String(), err)
	}
}

// A run that ended unrecorded (a full disk) is written out from what its
// file kept, then what of the tail its worker held comes after that, with
// the bytes in between counted as lost; the file is read no more.
func TestTailUnrecorded(t *testing.T) {
	dir := t.TempDir()
	r := claim.Run{Host: HostID(), Attempt: 1, StdoutPath: filepath.Join(dir, "1.out"), StderrPath: filepath.Join(dir, "1.err")}
	// The stream wrote "0123456789"; the file kept "0123", the worker the last four bytes.
	if err := os.WriteFile(r.StdoutPath, []byte("0123"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.StderrPath, []byte("e"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	var lost int64 = -1
	tl := &Tail{Stdout: &stdout, Stderr: &stderr, Unrecorded: func(_ Unrecorded, n int64) { lost = n }}
	var l runLogs
	defer l.close()
	l.open(r)
	if err := l.copyTo(0, &stdout, 2); err != nil { // "01" written before
		t.Fatal(err)
	}
	ended := r
	ended.Tails = &claim.Tails{Stdout: claim.Tail{Data: []byte("6789"), Size: 10}, Stderr: claim.Tail{Data: []byte("e"), Size: 1}}
	if err := tl.unrecorded(&l, Unrecorded{Run: ended}); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "01236789" || stderr.String() != "e" || lost != 2 {
		t.Errorf("unrecorded wrote stdout %q, stderr %q, lost %d; want %q, %q, 2", stdout.String(), stderr.String(), lost, "01236789", "e")
	}
	if err := os.WriteFile(r.StdoutPath, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.copy(&stdout, &stderr); err != nil || stdout.String() != "01236789" || l.files[0] != nil {
		t.Errorf("copy after unrecorded: stdout %q, %v, file open %v; want nothing more, the file closed", stdout.String(), err, l.files[0] != nil)
	}
}

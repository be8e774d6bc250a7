package front

import (
	"testing"
	"time"
)

// suspendable records what a Ctrl-Z asked of a job.
type suspendable struct{ said chan string }

func (j suspendable) Suspend() error  { j.said <- "suspend"; return nil }
func (j suspendable) Continue() error { j.said <- "continue"; return nil }

// A Ctrl-Z that comes while run's job is handed over (the worker may have
// started it already) waits for the hand-off's answer, and stops the job
// with run; one after a hand-off that failed stops run alone, and so does
// one whose hand-off does not answer in time.
func TestCtrlZDuringTheHandOffStopsTheJob(t *testing.T) {
	stops := make(chan struct{}, 2)
	s := &Suspender{stop: func() { stops <- struct{}{} }, wait: time.Hour}
	s.Expect()
	done := make(chan struct{})
	go func() { s.suspend(); close(done) }()
	deadline := time.Now().Add(time.Minute)
	for {
		s.mu.Lock()
		waiting := s.waiting
		s.mu.Unlock()
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the Ctrl-Z did not wait for the hand-off's answer")
		}
		time.Sleep(time.Millisecond)
	}
	job := suspendable{said: make(chan string, 2)}
	s.Follow(job)
	<-done
	if len(stops) != 1 {
		t.Fatalf("run stopped %d times, want once", len(stops))
	}
	if a, b := <-job.said, <-job.said; a != "suspend" || b != "continue" {
		t.Errorf("the job was told %q then %q, want suspend then continue", a, b)
	}

	<-stops
	s.Expect()
	s.Follow(nil) // the hand-off failed: run stores the job itself
	s.suspend()
	if len(stops) != 1 {
		t.Errorf("after a failed hand-off, run stopped %d times, want once", len(stops))
	}

	<-stops
	s.wait = 10 * time.Millisecond
	s.Expect() // a worker that does not answer
	s.suspend()
	if len(stops) != 1 {
		t.Errorf("while a hand-off went unanswered, run stopped %d times, want once", len(stops))
	}
}

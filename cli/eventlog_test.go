package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/run"
)

// TestWorkerLogJSON: with --log-format json every stderr line is one JSON
// object with time, level and event, and the job's fields where they apply.
func TestWorkerLogJSON(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "ok", "--command", "echo 'a > b & c'")
	h.must("enqueue", "--id", "bad", "--max-retries", "1", "--command", "exit 3")
	_, errText, code := h.run("worker", "start", "--drain", "--no-spool", "--log-format", "json")
	if code != 0 {
		t.Fatalf("worker exit %d\n%s", code, errText)
	}
	type line struct {
		Time       time.Time `json:"time"`
		Level      string    `json:"level"`
		Event      string    `json:"event"`
		Msg        string    `json:"msg"`
		Job        string    `json:"job"`
		Attempt    int       `json:"attempt"`
		MaxRetries int       `json:"max_retries"`
		ExitCode   *int      `json:"exit_code"`
		DurationMS *int64    `json:"duration_ms"`
		Worker     string    `json:"worker"`
		Home       string    `json:"home"`
		Slots      int       `json:"slots"`
	}
	var events []string
	byEvent := map[string]line{}
	for _, text := range strings.Split(strings.TrimSpace(errText), "\n") {
		var l line
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			t.Fatalf("stderr line %q is not a JSON object: %v", text, err)
		}
		if l.Time.IsZero() || l.Level != "info" || l.Msg == "" {
			t.Errorf("line %q: want a time, level info and a msg", text)
		}
		if strings.Contains(text, `\u003e`) {
			t.Errorf("line %q is HTML-escaped", text)
		}
		events = append(events, l.Event+" "+l.Job)
		byEvent[l.Event+" "+l.Job] = l
	}
	want := []string{"start ", "started ok", "completed ok", "started bad", "dead bad", "stop "}
	if strings.Join(events, ",") != strings.Join(want, ",") {
		t.Errorf("events %q, want %q", events, want)
	}
	if s := byEvent["start "]; s.Worker == "" || s.Home != h.dir || s.Slots != 1 {
		t.Errorf("start line %+v: want the worker id, home %s and 1 slot", s, h.dir)
	}
	if s := byEvent["started ok"]; s.Attempt != 1 || s.MaxRetries != 3 {
		t.Errorf("started line %+v: want attempt 1 of 3", s)
	}
	if c := byEvent["completed ok"]; c.DurationMS == nil || c.ExitCode == nil || *c.ExitCode != 0 {
		t.Errorf("completed line %+v: want duration_ms and exit_code 0", c)
	}
	if d := byEvent["dead bad"]; d.ExitCode == nil || *d.ExitCode != 3 || d.Attempt != 1 {
		t.Errorf("dead line %+v: want exit_code 3, attempt 1", d)
	}
}

// TestWatchSpeaks: watch says where it watches, what it ingests, and that
// it stopped.
func TestWatchSpeaks(t *testing.T) {
	h := newHome(t)
	w := h.start("watch")
	waitFor(t, 30*time.Second, "watch to start", func() bool {
		return strings.Contains(w.stderr.String(), "queuectl: watching spool "+filepath.Join(h.dir, "spool")+"\n")
	})
	if err := os.WriteFile(filepath.Join(h.dir, "spool", "a.json"), []byte(`{"id": "a", "command": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "watch to ingest a.json", func() bool {
		return strings.Contains(w.stderr.String(), "queuectl: ingested a.json as job a\n")
	})
	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, 30*time.Second); code != 0 {
		t.Errorf("watch exit %d", code)
	}
	if !strings.HasSuffix(w.stderr.String(), "queuectl: stopped watching spool "+filepath.Join(h.dir, "spool")+"\n") {
		t.Errorf("watch stderr does not end with its stop line:\n%s", w.stderr)
	}
}

// TestHeldLinesComeFirst: the lines held back until the start-up line
// (the spool's first pass, runs recovered from a dead worker) are
// printed before any line logged after it, whatever goroutine logs it:
// a job recovered from a dead worker is said recovered before it is
// said started again.
func TestHeldLinesComeFirst(t *testing.T) {
	for round := 0; round < 500; round++ {
		out := &syncBuffer{}
		l := &eventLog{w: out}
		l.holdUntilStart()
		for i := 1; i <= 3; i++ {
			l.print(logLine{Level: "info", Event: "lost", Msg: fmt.Sprintf("held %d", i)})
		}
		// Another goroutine logs all along, before, while and after the
		// start-up line releases the held ones.
		var stop atomic.Bool
		logging, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; !stop.Load(); i++ {
				l.print(logLine{Level: "info", Event: "started", Msg: "late"})
				if i == 0 {
					close(logging)
				}
			}
		}()
		<-logging
		l.worker(run.Event{Kind: run.EventStart, Worker: "w", Slots: 1})
		stop.Store(true)
		<-done
		l.close()
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		want := []string{"held 1", "held 2", "held 3"}
		var got []string
		for _, line := range lines[1:] {
			if !strings.HasSuffix(line, "late") {
				got = append(got, strings.TrimPrefix(line, "queuectl: "))
				continue
			}
			if len(got) < len(want) {
				t.Fatalf("round %d: a line logged after the start-up line came before the held ones:\n%s", round, out.String())
			}
		}
		if !strings.HasPrefix(lines[0], "queuectl: worker w started") || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("round %d: lines\n%s\nwant the start-up line, then %q in order", round, out.String(), want)
		}
	}
}

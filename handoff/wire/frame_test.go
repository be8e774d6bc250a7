package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
)

// The fields a brief stream reads (frame.go), as types that hold only
// them: json.Unmarshal into these is what parseRunAnswer and parseFrame
// must do.
type (
	briefJob struct {
		ID         string
		State      jobs.State
		UniqueKey  string
		MaxRetries int
		Timeout    time.Duration
		RunAfter   time.Time
	}
	briefRun struct {
		Attempt            int
		Host               string
		StartedAt, EndedAt time.Time
		Outcome, Error     string
	}
	briefQueue struct {
		Name                string
		MaxRunning, Running int
	}
	briefEvent struct {
		Job   briefJob
		Run   briefRun
		Ended bool
	}
	briefStall struct {
		Why, Hint string
	}
	briefFrame struct {
		Stdout, Stderr []byte
		Event          *briefEvent
		Waiting        *briefQueue
		Paused         string
		Stalled        *briefStall
		End            *briefJob
		Handover       string
	}
	briefAnswer struct {
		Declined string
		Unknown  bool
		Job      briefJob
		Outcome  jobs.Outcome
	}
)

func jobOf(j jobs.Job) briefJob {
	return briefJob{j.ID, j.State, j.UniqueKey, j.MaxRetries, j.Timeout, j.RunAfter}
}

func runOf(r jobs.Run) briefRun {
	return briefRun{r.Attempt, r.Host, r.StartedAt, r.EndedAt, r.Outcome, r.Error}
}

func frameOf(fr Frame) briefFrame {
	b := briefFrame{Stdout: fr.Stdout, Stderr: fr.Stderr, Paused: fr.Paused, Handover: fr.Handover}
	if fr.Stalled != nil {
		b.Stalled = &briefStall{fr.Stalled.Why, fr.Stalled.Hint}
	}
	if fr.Event != nil {
		b.Event = &briefEvent{jobOf(fr.Event.Job), runOf(fr.Event.Run), fr.Event.Ended}
	}
	if fr.Waiting != nil {
		b.Waiting = &briefQueue{fr.Waiting.Name, fr.Waiting.MaxRunning, fr.Waiting.Running}
	}
	if fr.End != nil {
		j := jobOf(*fr.End)
		b.End = &j
	}
	return b
}

// checkParseFrame holds parseFrame and parseRunAnswer to json.Unmarshal
// into the brief types: the same fields, and an error where it gives one.
func checkParseFrame(t *testing.T, line []byte) {
	t.Helper()
	var want briefFrame
	wantErr := json.Unmarshal(line, &want)
	var fr Frame
	err := parseFrame(line, &fr)
	switch {
	case (err != nil) != (wantErr != nil):
		t.Fatalf("parseFrame(%q): error %v, json.Unmarshal's %v", line, err, wantErr)
	case err == nil && !reflect.DeepEqual(frameOf(fr), want):
		t.Fatalf("parseFrame(%q) = %+v, json.Unmarshal reads %+v", line, frameOf(fr), want)
	}
	var wantA briefAnswer
	wantErr = json.Unmarshal(line, &wantA)
	var a Answer[jobs.Job]
	err = parseRunAnswer(line, &a)
	got := briefAnswer{a.Declined, a.Unknown, jobOf(a.Job), a.Outcome}
	switch {
	case (err != nil) != (wantErr != nil):
		t.Fatalf("parseRunAnswer(%q): error %v, json.Unmarshal's %v", line, err, wantErr)
	case err == nil && !reflect.DeepEqual(got, wantA):
		t.Fatalf("parseRunAnswer(%q) = %+v, json.Unmarshal reads %+v", line, got, wantA)
	}
}

// framesOf are the lines a worker writes while it follows a job, with s
// in every string and n in every number.
func framesOf(s string, n int) [][]byte {
	code := n
	at := time.Unix(int64(n)*1e6, int64(n)).UTC()
	req := requestOf(s, n)
	j := jobs.Job{ID: s, Command: s, Queue: s, State: jobs.State(s), UniqueKey: s, Label: s, Cwd: s,
		Env: req.Job.Env, WaitingOn: req.Job.After, LastError: s, Hooks: req.Job.Hooks, Limits: req.Job.Limits,
		Attempts: n, MaxRetries: n, Priority: -n, Timeout: time.Duration(n) * time.Second, ExitCode: &code,
		CreatedAt: at, RunAfter: at.Add(time.Hour)}
	r := jobs.Run{JobID: s, Attempt: n, WorkerID: s, Host: s, PID: n, StartedAt: at, EndedAt: at.Add(time.Second),
		Outcome: s, ExitCode: &code, Error: s, StdoutPath: s, Tails: &jobs.Tails{}}
	frames := []any{
		Answer[jobs.Job]{Job: j, Outcome: jobs.Outcome(s)},
		Answer[jobs.Job]{Declined: s, Unknown: n%2 == 1},
		Frame{Stdout: []byte(s)}, Frame{Stderr: []byte(s + s)},
		Frame{Event: &Event{Job: j, Run: r, Ended: n%2 == 0}},
		Frame{Waiting: &jobs.Queue{Name: s, MaxRunning: n, Running: n + 1, UpdatedAt: at}},
		Frame{Paused: s}, Frame{Stalled: &Stall{Why: s, Hint: s + s}}, Frame{Stalled: &Stall{Why: s}},
		Frame{End: &j}, Frame{Handover: s},
	}
	var lines [][]byte
	for _, f := range frames {
		data, err := json.Marshal(f)
		if err != nil {
			panic(err)
		}
		lines = append(lines, append(data, '\n'))
	}
	return lines
}

// TestParseFrame: the small queuectl's run reads a worker's answer and
// frames as encoding/json would, for real ones with odd strings in every
// field, and for lines no worker writes.
func TestParseFrame(t *testing.T) {
	for i, s := range oddStrings {
		for n := range 3 {
			for _, line := range framesOf(s, n+i) {
				checkParseFrame(t, line)
			}
		}
	}
	var fr Frame
	if err := parseFrame(framesOf("x", 2)[4], &fr); err != nil || fr.Event == nil || fr.Event.Run.Attempt != 2 ||
		fr.Event.Job.Timeout != 2*time.Second || fr.Event.Run.EndedAt.IsZero() {
		t.Fatalf("an event frame read as %+v (%v)", fr.Event, err)
	}
	for _, line := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"Stdout":"aGk="}`, `{"stdout":"aGk"}`, `{"Stdout":"a\u0047k="}`,
		`{"Stdout":"aG\nk="}`, `{"Stdout":[104,105]}`, `{"Stdout":[]}`, `{"Stdout":[256]}`, `{"Stdout":[-0]}`,
		`{"Stdout":[1.0]}`, `{"Stdout":[null,1]}`, `{"Stdout":["a"]}`, `{"Stdout":{}}`, `{"Stdout":1}`,
		`{"Stdout":"aGk=","Stdout":null}`, `{"Stdout":""}`, `{"Stderr":"!!!"}`,
		`{"Event":null}`, `{"Event":{}}`, `{"Event":1}`, `{"Event":{"Job":null,"Run":null,"Ended":null}}`,
		`{"Event":{"Run":{"Attempt":1}},"Event":{"Run":{"Host":"h"}}}`, `{"Event":{"Run":{"Attempt":1}},"Event":null}`,
		`{"Event":{"Run":{"Attempt":1.5}}}`, `{"Event":{"Run":{"Attempt":1e2}}}`, `{"Event":{"Run":{"Attempt":-0}}}`,
		`{"Event":{"Run":{"Attempt":9223372036854775808}}}`, `{"Event":{"Run":{"Attempt":"1"}}}`,
		`{"Event":{"Run":{"StartedAt":"2026-11-28T19:00:00Z"}}}`, `{"Event":{"Run":{"StartedAt":"2026-11-28"}}}`,
		`{"Event":{"Run":{"StartedAt":null}}}`, `{"Event":{"Run":{"StartedAt":1}}}`, `{"Event":{"Run":{"StartedAt":{}}}}`,
		`{"Event":{"Run":{"StartedAt":"2026-11-28T19:00:00\u005a"}}}`, `{"Event":{"Run":{"startedat":"2026-11-28T19:00:00+01:00"}}}`,
		`{"Event":{"Job":{"Timeout":-5,"MaxRetries":null,"RunAfter":"2026-11-28T19:00:00.123456789Z"}}}`,
		`{"Waiting":{"Name":"q","MaxRunning":2,"Running":2}}`, `{"Waiting":{"maxrunning":2,"running":"2"}}`, `{"Waiting":[]}`,
		`{"Paused":"q"}`, `{"Paused":1}`, `{"Stalled":{"Why":"is held","Hint":"queuectl release a"}}`,
		`{"Stalled":null}`, `{"Stalled":{"why":"x","Hint":1}}`, `{"Stalled":"x"}`,
		`{"End":{"ID":"a","State":"completed"}}`, `{"End":null}`, `{"End":"x"}`, `{"Handover":"why"}`, `{"Handover":1}`,
		`{"Job":{"ID":"a","Timeout":1000000000,"Limits":"garbage"},"Outcome":"created"}`, `{"Job":{"ſtate":"s","K":1}}`,
		`{"x":[1,-0.5e+3,0,{"y":[[]]},"\u00e9\ud83c\udf89\ud800x\/\b\f\n\r\t\"\\"]}`, `{"x":01}`, `{"x":1,}`,
		`{"Stdout":"aGk="} x`, `{"Event":{"Run":{"Attempt":1}}`, "{\"Handover\":\"a\x01\"}", "{\"Handover\":\"\xff\"}",
		`{"Stdout":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	} {
		checkParseFrame(t, []byte(line))
	}
}

func FuzzParseFrame(f *testing.F) {
	for i, s := range oddStrings {
		for _, line := range framesOf(s, i) {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"Stdout":[104,null],"Event":{"Run":{"StartedAt":"2026-11-28T19:00:00Z"}},"End":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkParseFrame(t, line)
	})
}

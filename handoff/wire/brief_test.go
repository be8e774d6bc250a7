package wire

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/queuectl/queuectl/claim/jobs"
)

// answerOf is a worker's answer as it writes it: a whole job, with s in
// every string the job holds.
func answerOf(s string, n int) []byte {
	req := requestOf(s, n)
	j := jobs.Job{ID: s, Command: s, Queue: s, State: jobs.State(s), UniqueKey: s, Label: s, Cwd: s,
		Env: req.Job.Env, WaitingOn: req.Job.After, LastError: s, Hooks: req.Job.Hooks, Limits: req.Job.Limits,
		Attempts: n, MaxRetries: n, Priority: -n, CreatedAt: time.Unix(int64(n)*1e6, 0).UTC()}
	a := Answer[jobs.Job]{Job: j, Outcome: jobs.Outcome(s)}
	if n%3 == 1 {
		a = Answer[jobs.Job]{Declined: s, Unknown: n%2 == 1}
	}
	data, err := json.Marshal(a)
	if err != nil {
		panic(err)
	}
	return append(data, '\n')
}

// checkParseBrief holds ParseBrief to json.Unmarshal into an Answer[Brief]:
// the same fields, and an error where it gives one.
func checkParseBrief(t *testing.T, line []byte) {
	t.Helper()
	var want Answer[Brief]
	wantErr := json.Unmarshal(line, &want)
	got, err := ParseBrief(line)
	switch {
	case (err != nil) != (wantErr != nil):
		t.Fatalf("ParseBrief(%q): error %v, json.Unmarshal's %v", line, err, wantErr)
	case err == nil && got != want:
		t.Fatalf("ParseBrief(%q) = %+v, json.Unmarshal reads %+v", line, got, want)
	}
}

// TestParseBrief: the small queuectl reads a worker's answer as
// encoding/json would, for real answers with odd strings in every field,
// and for lines no worker writes.
func TestParseBrief(t *testing.T) {
	for i, s := range oddStrings {
		for n := range 4 {
			line := answerOf(s, n+i)
			checkParseBrief(t, line)
			if a, err := ParseBrief(line); err == nil && a.Declined == "" && utf8.ValidString(s) && a.Job.ID != s {
				t.Errorf("job id %q read as %q", s, a.Job.ID)
			}
		}
	}
	for _, line := range []string{
		``, ` `, `null`, `null x`, `{}`, `{} {}`, `[]`, `"x"`, `1`, `true`, `{"Declined":"x"`, `{"Declined":1}`,
		`{"declined":"lower","unknown":true}`, `{"DECLINED":"upper","Job":{"id":"a","uniquekey":"k","STATE":"s"}}`,
		`{"ſtate":1}`, `{"Job":{"ſtate":"long s","İD":"dotted"}}`, `{"Job":{"K":1,"Id":"kelvin"}}`,
		`{"Job":null,"Outcome":null,"Declined":null,"Unknown":null}`, `{"Job":{"ID":"a"},"Job":{"State":"b"}}`,
		`{"Job":{"ID":"a"},"Job":null}`, `{"Job":"x"}`, `{"Job":[]}`, `{"Job":{"ID":["x"]}}`, `{"Unknown":"true"}`,
		`{"Unknown":1}`, `{"Unknown":false,"Unknown":true}`, `{"Outcome":{}}`, `{"Job":{"ID":null,"State":true}}`,
		`{"x":[1,-0.5e+3,0,-0,1E9,{"y":[[]]},"\u00e9\ud83c\udf89\ud800\udc00\ud800x\/\b\f\n\r\t\"\\"]}`,
		`{"x":01}`, `{"x":1.}`, `{"x":.1}`, `{"x":1e}`, `{"x":-}`, `{"x":+1}`, `{"x":tru}`, `{"x":nul}`, `{"x":truex}`,
		`{"x":"\a"}`, `{"x":"\u12"}`, `{"x":"\u12g4"}`, "{\"x\":\"a\x01\"}", "{\"x\":\"\xff\xfe\"}", `{"x" "y"}`,
		`{"x":1,}`, `{,}`, `{"x":[1,]}`, `{"x":[,1]}`, `{"x":[1 2]}`, `{"x":1}}`, `{"x":]}`, `{1:2}`,
		"{\"Job\":{\"ID\":\"\\ud800\\u0041\xed\xa0\x80\xc3\"}}", "\t{\"Declined\" : \"spaced\" }\r\n",
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), `{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	} {
		checkParseBrief(t, []byte(line))
	}
}

func FuzzParseBrief(f *testing.F) {
	for i, s := range oddStrings {
		f.Add(answerOf(s, i))
		f.Add(answerOf(s, i+1))
	}
	f.Add([]byte(`{"Job":{"id":"a","ſtate":"b"},"job":null,"Unknown":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkParseBrief(t, line)
	})
}

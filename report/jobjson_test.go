package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// tricky strings: every escape encoding/json makes with HTML escaping off.
var tricky = []string{"", "plain", `a "quoted" \path\`, "tab\there\nnew\rline\b\f", "\x00\x01\x1f\x7f",
	"<html> & more", "日本語 ⏎ 🙂", "bad \xff\xfe utf8 \xe2\x82", "sep \u2028 and \u2029", "\x1b[2J"}

// wantObject is o as encoding/json writes it as an element of WriteJSON's array.
func wantObject(t *testing.T, o *JobObject) string {
	t.Helper()
	b, err := appendIndented(nil, o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAppendJobObject(t *testing.T) {
	jobs := sampleJobs()
	full := claim.Job{ID: "full", Command: "run", State: claim.Failed, Attempts: 1, MaxRetries: 3,
		BackoffBase: 2, Priority: -4, Queue: "q", Runs: 7, Lost: 2, Timeout: 90 * time.Second,
		Env: map[string]string{"B": "2", "A": "1", "Z\n": "\u2028"}, Cwd: "/srv", UniqueKey: "u",
		Hooks: claim.Hooks{OnSuccess: "s", OnFailure: "f", OnDead: "d"}, WaitingOn: []string{"a", "b"}, After: []string{"a", "b", "c"}, DeadBy: "a",
		RunAt: now, RunAfter: now.Add(time.Second), WorkerID: "w", LeaseUntil: now, LastError: "boom",
		ExitCode: intp(0), CreatedAt: now, UpdatedAt: now, FinishedAt: now, CancelAt: now.Add(250 * time.Millisecond)}
	jobs = append(jobs, full)
	for _, s := range tricky {
		j := full
		j.ID, j.Command, j.LastError, j.Env, j.WaitingOn = s, s, s, map[string]string{s: s}, []string{s, s}
		jobs = append(jobs, j)
	}
	for _, j := range jobs {
		o := JobJSON(j)
		got, err := appendJobObject(nil, &o)
		if err != nil {
			t.Fatal(err)
		}
		if want := wantObject(t, &o); string(got) != want {
			t.Errorf("appendJobObject(%q) =\n%s\nwant\n%s", j.ID, got, want)
		}
	}
}

// Every field of JobObject set: a field added to the struct and not to
// appendJobObject fails here.
func TestAppendJobObjectEveryField(t *testing.T) {
	var o JobObject
	v := reflect.ValueOf(&o).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(v.Type().Field(i).Name)
		case reflect.Int:
			f.SetInt(int64(i + 1))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{"K": "V"}))
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"x", "y"}))
		case reflect.Pointer:
			if f.Type() == reflect.TypeFor[*int]() {
				f.Set(reflect.ValueOf(intp(3)))
			}
		default:
			t.Fatalf("JobObject.%s: a %s, which this test cannot fill", v.Type().Field(i).Name, f.Kind())
		}
	}
	got, err := appendJobObject(nil, &o)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantObject(t, &o); string(got) != want {
		t.Errorf("appendJobObject =\n%s\nwant\n%s", got, want)
	}
	o.Limits = &claim.Limits{Memory: 1 << 20}
	if got, _ := appendJobObject(nil, &o); string(got) != wantObject(t, &o) {
		t.Errorf("appendJobObject with limits =\n%s\nwant\n%s", got, wantObject(t, &o))
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got)+"\n" != want.String() {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want.String())
		}
	})
}

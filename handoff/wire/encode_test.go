package wire

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
)

// odd strings: escapes, HTML, control characters, invalid UTF-8, the
// separators JSON leaves alone and JavaScript does not.
var oddStrings = []string{"", "true", `echo "hi" \ there`, "<b>&amp;</b>", "a\x00b\x01\x1f\x7f",
	"\b\f\n\r\t", "caf\xc3\xa9 \xe2\x80\xa8 \xe2\x80\xa9", "\xff\xfe bad \xc3", "\xed\xa0\x80", "日本語 🎉", "\u2027\u202a"}

func requestOf(s string, n int) Request {
	one, d := n, time.Duration(n)*time.Second
	nj := jobs.NewJob{ID: s, Command: s, Queue: s, Cwd: s, UniqueKey: s, Label: s, IngestKey: s,
		Priority: -n, Delay: d, Redrive: n%2 == 1}
	if n > 0 {
		nj.MaxRetries, nj.BackoffBase, nj.Timeout = &one, &one, &d
		mask := (n - 1) * 0o22 // 0 too: a umask that masks nothing
		nj.Umask = &mask
		nj.Env = map[string]string{s: s, "B": "b", "a": s + s}
		nj.After = []string{s, "x"}
		nj.Hooks = jobs.Hooks{OnSuccess: s, OnDead: "d" + s}
		nj.Limits = jobs.Limits{Memory: int64(n) << 20, CPU: d, NoFile: int64(n) + 64, FSize: 1 << 30}
		nj.RunAt = time.Date(2026, 11, n%28+1, 3, 4, 5, n*1000, time.FixedZone("x", 3600))
	}
	if n == 2 {
		nj.Env, nj.After = map[string]string{}, []string{}
		nj.Hooks.OnFailure = s
	}
	return Request{Fingerprint: Fingerprint(n%2 == 0), DB: "/h/" + s, Job: nj, Follow: n%2 == 0,
		Environ: map[string]string{"PATH": s, s: "v"}}
}

func checkAppendRequest(t *testing.T, req Request) {
	t.Helper()
	// An env's names and values that are not UTF-8 go escaped, which
	// json.Marshal does not do (jobs.EscapeEnv).
	escaped := req
	escaped.Job.Env, escaped.Environ = jobs.EscapeEnv(req.Job.Env), jobs.EscapeEnv(req.Environ)
	want, err := json.Marshal(escaped)
	got, gotErr := AppendRequest(nil, req)
	if (err != nil) != (gotErr != nil) {
		t.Fatalf("AppendRequest error %v, json.Marshal %v", gotErr, err)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(got, append(want, '\n')) {
		t.Fatalf("AppendRequest wrote\n%s\njson.Marshal writes\n%s", got, want)
	}
	var back Request
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("the worker cannot read %s: %v", got, err)
	}
	if env := jobs.UnescapeEnv(back.Job.Env); !maps.Equal(env, req.Job.Env) && (len(env) > 0 || len(req.Job.Env) > 0) {
		t.Fatalf("the worker reads env %q, sent %q", env, req.Job.Env)
	}
	if env := jobs.UnescapeEnv(back.Environ); !maps.Equal(env, req.Environ) && (len(env) > 0 || len(req.Environ) > 0) {
		t.Fatalf("the worker reads environ %q, sent %q", env, req.Environ)
	}
}

// TestAppendRequest: a client writes its request exactly as encoding/json
// would, for every field set or not, and for odd strings.
func TestAppendRequest(t *testing.T) {
	for i, s := range oddStrings {
		for n := range 4 {
			checkAppendRequest(t, requestOf(s, n+i))
		}
	}
	checkAppendRequest(t, Request{})
	big := requestOf("x", 1)
	big.Job.RunAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) // json.Marshal refuses it
	checkAppendRequest(t, big)
}

func FuzzAppendRequest(f *testing.F) {
	for i, s := range oddStrings {
		f.Add(s, i, int64(i))
	}
	f.Fuzz(func(t *testing.T, s string, n int, unix int64) {
		req := requestOf(s, n&7)
		if n&8 != 0 {
			req.Job.RunAt = time.Unix(unix, int64(n)).UTC()
		}
		checkAppendRequest(t, req)
	})
}

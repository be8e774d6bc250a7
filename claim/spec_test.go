package claim_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func durp(d time.Duration) *time.Duration { return &d }

// show renders a NewJob with its pointers followed, for failure messages.
func show(nj claim.NewJob) string {
	b, _ := json.Marshal(nj)
	return string(b)
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want claim.NewJob
	}{
		{"minimal", `{"command": "echo hi"}`, claim.NewJob{Command: "echo hi"}},
		{"all fields", `{"id": "nightly-db", "command": "pg_dump app > /backup/app.sql",
			"max_retries": 3, "backoff_base": 2, "priority": 7, "queue": "db",
			"run_at": "2026-11-21T03:00:00Z", "timeout": "30m",
			"env": {"PGHOST": "db1"}, "cwd": "/srv/app", "unique_key": "nightly-db"}`,
			claim.NewJob{ID: "nightly-db", Command: "pg_dump app > /backup/app.sql",
				MaxRetries: intp(3), BackoffBase: intp(2), Priority: 7, Queue: "db",
				RunAt: t0, Timeout: durp(30 * time.Minute), Env: map[string]string{"PGHOST": "db1"},
				Cwd: "/srv/app", UniqueKey: "nightly-db"}},
		{"timeout in integer seconds", `{"command": "x", "timeout": 90}`,
			claim.NewJob{Command: "x", Timeout: durp(90 * time.Second)}},
		{"timeout 0 means none", `{"command": "x", "timeout": 0}`,
			claim.NewJob{Command: "x", Timeout: durp(0)}},
		{"timeout null", `{"command": "x", "timeout": null}`, claim.NewJob{Command: "x"}},
		{"delay as duration", `{"command": "x", "delay": "90s"}`,
			claim.NewJob{Command: "x", Delay: 90 * time.Second}},
		{"delay in integer seconds", `{"command": "x", "delay": 90}`,
			claim.NewJob{Command: "x", Delay: 90 * time.Second}},
		{"run_at with offset", `{"command": "x", "run_at": "2026-11-21T04:00:00+01:00"}`,
			claim.NewJob{Command: "x", RunAt: t0}},
		{"negative priority", `{"command": "x", "priority": -3}`, claim.NewJob{Command: "x", Priority: -3}},
		{"dead object sets Redrive", `{"id": "d1", "command": "x", "dead": {"attempts": 3,
			"last_error": "exit status 1", "exit_code": 1, "died_at": "2026-11-21T03:00:00Z",
			"logs": ["/x/1.out"]}}`,
			claim.NewJob{ID: "d1", Command: "x", Redrive: true}},
		{"dead null", `{"command": "x", "dead": null}`, claim.NewJob{Command: "x"}},
		{"surrounding whitespace", " \n\t{\"command\": \"x\"}\n\n", claim.NewJob{Command: "x"}},
		{"id of 128 characters", `{"id": "` + strings.Repeat("a", 128) + `", "command": "x"}`,
			claim.NewJob{ID: strings.Repeat("a", 128), Command: "x"}},
		{"unicode command", `{"command": "echo héllo ✓"}`, claim.NewJob{Command: "echo héllo ✓"}},
		{"workflow fields", `{"id": "d", "command": "x", "after": ["b", "c"], "on_success": "notify-send ok",
			"on_failure": "echo f", "on_dead": "mail", "limits": {"memory": "512M", "cpu": "10m", "nofile": 1024,
			"nproc": 64, "fsize": 1073741824}}`,
			claim.NewJob{ID: "d", Command: "x", After: []string{"b", "c"},
				Hooks:  claim.Hooks{OnSuccess: "notify-send ok", OnFailure: "echo f", OnDead: "mail"},
				Limits: claim.Limits{Memory: 512 << 20, CPU: 10 * time.Minute, NoFile: 1024, NProc: 64, FSize: 1 << 30}}},
		{"cpu limit in seconds", `{"command": "x", "limits": {"cpu": 90}}`,
			claim.NewJob{Command: "x", Limits: claim.Limits{CPU: 90 * time.Second}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claim.ParseSpec([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseSpec(%q) = %v, want %s", tt.in, err, show(tt.want))
			}
			got.RunAt = got.RunAt.UTC()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSpec(%q) = %s, want %s", tt.in, show(got), show(tt.want))
			}
		})
	}
}

// TestParseSpecErrors checks that each kind of bad spec is refused with
// ErrInvalid and a message naming the problem and its fix.
func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings of the message: what is wrong, how to fix it
	}{
		{"empty", ``, []string{"empty", `{"command": "echo hi"}`}},
		{"blank", " \n\t ", []string{"empty", "give a JSON object"}},
		{"truncated", `{"command": "echo hi"`, []string{"truncated", "not closed"}},
		{"truncated in a string", `{"command": "ec`, []string{"truncated"}},
		{"array", `["echo hi"]`, []string{"must be a JSON object", "array"}},
		{"string", `"echo hi"`, []string{"must be a JSON object", "string"}},
		{"number", `42`, []string{"must be a JSON object", "number"}},
		{"not JSON", `command: echo hi`, []string{"not valid JSON at byte"}},
		{"unknown field", `{"command": "x", "comand": "y"}`, []string{`unknown field "comand" (did you mean "command"?)`, "known fields: id, command"}},
		{"unknown field, far from any", `{"command": "x", "frobnicate": 1}`, []string{`unknown field "frobnicate"; known fields: id, command`}},
		{"unknown field, a plural", `{"command": "x", "max_retry": 1}`, []string{`unknown field "max_retry" (did you mean "max_retries"?)`}},
		{"command not a string", `{"command": 5}`, []string{`"command"`, "number", "string"}},
		{"max_retries as string", `{"command": "x", "max_retries": "3"}`, []string{`"max_retries"`, "string", "number"}},
		{"max_retries fraction", `{"command": "x", "max_retries": 1.5}`, []string{`"max_retries"`, "1.5"}},
		{"env as array", `{"command": "x", "env": ["A=1"]}`, []string{`"env"`, "array", "object"}},
		{"env value not a string", `{"command": "x", "env": {"A": 1}}`, []string{"env", "number", "string"}},
		{"id ../x", `{"id": "../x", "command": "x"}`, []string{`id "../x" is not valid`, "letters, digits"}},
		{"id a/b", `{"id": "a/b", "command": "x"}`, []string{`id "a/b" is not valid`, "letters, digits"}},
		{"id with leading dot", `{"id": ".hidden", "command": "x"}`, []string{`id ".hidden" is not valid`, "starting with a letter or digit"}},
		{"id with space", `{"id": "a b", "command": "x"}`, []string{"is not valid"}},
		{"id of 129 characters", `{"id": "` + strings.Repeat("a", 129) + `", "command": "x"}`, []string{"1 to 128"}},
		{"id not a string", `{"id": 7, "command": "x"}`, []string{`"id"`, "number"}},
		{"missing command", `{"id": "x"}`, []string{`missing "command"`, "give the shell command"}},
		{"empty object", `{}`, []string{`missing "command"`}},
		{"null", `null`, []string{`missing "command"`}},
		{"blank command", `{"command": "  \t"}`, []string{`empty "command"`, "give the shell command"}},
		{"null command", `{"command": null}`, []string{`missing "command"`}},
		{"NUL in command", `{"command": "a\u0000b"}`, []string{"NUL"}},
		{"max_retries 0", `{"command": "x", "max_retries": 0}`, []string{"max_retries is 0", "give 1 to 1000"}},
		{"max_retries negative", `{"command": "x", "max_retries": -1}`, []string{"max_retries is -1", "give 1 to 1000"}},
		{"backoff_base 0", `{"command": "x", "backoff_base": 0}`, []string{"backoff_base is 0", "from 1 to 3600"}},
		{"bad run_at", `{"command": "x", "run_at": "tomorrow"}`, []string{`run_at "tomorrow"`, "RFC 3339", "2026-11-21T03:00:00Z"}},
		{"run_at without zone", `{"command": "x", "run_at": "2026-11-21T03:00:00"}`, []string{"RFC 3339"}},
		{"both run_at and delay", `{"command": "x", "run_at": "2026-11-21T03:00:00Z", "delay": "90s"}`, []string{"both run_at and delay", "give one of them"}},
		{"bad delay", `{"command": "x", "delay": "soon"}`, []string{"delay", `"soon" is not a duration`, "90s"}},
		{"negative delay", `{"command": "x", "delay": "-5s"}`, []string{"delay", "negative"}},
		{"negative delay seconds", `{"command": "x", "delay": -5}`, []string{"delay", "out of range", "whole seconds"}},
		{"delay as bool", `{"command": "x", "delay": true}`, []string{"delay", "not a duration"}},
		{"delay of 200 years", `{"command": "x", "delay": "1752000h"}`, []string{"delay"}},
		{"bad timeout", `{"command": "x", "timeout": "30 minutes"}`, []string{"timeout", "not a duration"}},
		{"fractional timeout", `{"command": "x", "timeout": 1.5}`, []string{"timeout", "not a duration"}},
		{"relative cwd", `{"command": "x", "cwd": "srv/app"}`, []string{`cwd "srv/app" is not an absolute path`, "starting with /"}},
		{"bad queue", `{"command": "x", "queue": "a b"}`, []string{`queue "a b" is not valid`}},
		{"env name with =", `{"command": "x", "env": {"A=B": "1"}}`, []string{`env name "A=B"`}},
		{"trailing object", `{"command": "x"} {"command": "y"}`, []string{"data after its closing brace", "exactly one JSON object"}},
		{"trailing garbage", `{"command": "x"} x`, []string{"data after its closing brace"}},
		{"invalid UTF-8", "{\"command\": \"echo \xff\"}", []string{"not valid UTF-8"}},
		{"duplicate key", `{"command": "true", "command": "rm -rf ~"}`, []string{`duplicate key "command" at byte 20`, "give each field once"}},
		{"duplicate key in env", `{"command": "x", "env": {"A": "1", "A": "2"}}`, []string{`duplicate key "A" at byte 35`}},
		{"duplicate escaped key", `{"command": "x", "comm\u0061nd": "y"}`, []string{`duplicate key "command" at byte 17`}},
		{"command over the argument limit", `{"command": "` + strings.Repeat("x", 131072) + `"}`, []string{"131072 bytes", "at most 131071", "script"}},
		{"env entry over the argument limit", `{"command": "x", "env": {"A": "` + strings.Repeat("x", 131070) + `"}}`, []string{`env entry "A"`, "at most 131071"}},
		{"after not an array", `{"command": "x", "after": "a"}`, []string{`"after"`, "array of job ids"}},
		{"after a bad id", `{"command": "x", "after": ["../a"]}`, []string{`after: "../a" is not a job id`}},
		{"after itself", `{"id": "a", "command": "x", "after": ["a"]}`, []string{"cannot wait for itself"}},
		{"unknown limit", `{"command": "x", "limits": {"ram": "1G"}}`, []string{`"limits" must be an object of memory, cpu`, "ram"}},
		{"bad memory", `{"command": "x", "limits": {"memory": "lots"}}`, []string{"limits.memory", "not a size"}},
		{"tiny memory", `{"command": "x", "limits": {"memory": 1000}}`, []string{"under 1M"}},
		{"cpu under a second", `{"command": "x", "limits": {"cpu": "500ms"}}`, []string{"under a second"}},
		{"negative nofile", `{"command": "x", "limits": {"nofile": -1}}`, []string{"negative"}},
		{"hook not a string", `{"command": "x", "on_dead": 5}`, []string{`"on_dead"`, "string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claim.ParseSpec([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseSpec(%q) = %s, nil, want an error", tt.in, show(got))
			}
			if !errors.Is(err, claim.ErrInvalid) {
				t.Errorf("ParseSpec(%q) = %v, want it to wrap ErrInvalid", tt.in, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseSpec(%q) = %q, want a message containing %q", tt.in, err, w)
				}
			}
		})
	}
}

// TestSpecJSONRoundTrip: a schedule keeps its job as SpecJSON writes it;
// every field a schedule's job may have comes back from ParseSpec as it
// was, so that a label (or any other) is not dropped between a schedule
// file or schedule add and the jobs it makes.
func TestSpecJSONRoundTrip(t *testing.T) {
	three, two := 3, 2
	nj := claim.NewJob{Command: "pg_dump app > /backup/app.sql", MaxRetries: &three, BackoffBase: &two,
		Priority: 5, Queue: "backup", Timeout: durp(time.Hour), Env: map[string]string{"PGHOST": "db1"},
		Cwd: "/srv/app", Label: "nightly db",
		Hooks:  claim.Hooks{OnSuccess: "echo ok", OnFailure: "echo failed", OnDead: "echo dead"},
		Limits: claim.Limits{Memory: 512 << 20, CPU: 10 * time.Minute, NoFile: 1024, NProc: 64, FSize: 1 << 30}}
	got, err := claim.ParseSpec([]byte(nj.SpecJSON()))
	if err != nil || !reflect.DeepEqual(got, nj) {
		t.Errorf("ParseSpec(SpecJSON()) = %s, %v; want %s", show(got), err, show(nj))
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"90s", 90 * time.Second},
		{"90", 90 * time.Second},
		{"0", 0},
		{"0s", 0},
		{" 5m ", 5 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"250ms", 250 * time.Millisecond},
		{"3153600000", 100 * 365 * 24 * time.Hour},
	}
	for _, tt := range tests {
		if got, err := claim.ParseDuration(tt.in); got != tt.want || err != nil {
			t.Errorf("ParseDuration(%q) = %v, %v, want %v, nil", tt.in, got, err, tt.want)
		}
	}
	bad := []string{"", "soon", "-1s", "-5", "1.5", "5 m", "3153600001", "9223372036854775807", "876001h", "2562047h"}
	for _, in := range bad {
		got, err := claim.ParseDuration(in)
		if err == nil {
			t.Errorf("ParseDuration(%q) = %v, nil, want an error", in, got)
			continue
		}
		if !errors.Is(err, claim.ErrInvalid) {
			t.Errorf("ParseDuration(%q) = %v, want it to wrap ErrInvalid", in, err)
		}
		if !strings.Contains(err.Error(), in) {
			t.Errorf("ParseDuration(%q) = %q, want the message to quote the input", in, err)
		}
	}
}

func TestValidate(t *testing.T) {
	good := []claim.NewJob{
		{Command: "x"},
		{Command: "x", ID: "a.b_c-1", Queue: "mail", MaxRetries: intp(1), BackoffBase: intp(3600),
			Timeout: durp(time.Hour), Cwd: "/tmp", Env: map[string]string{"A": ""}},
		{Command: "x", RunAt: t0},
		{Command: "x", Delay: time.Second},
	}
	for _, nj := range good {
		if err := nj.Validate(); err != nil {
			t.Errorf("Validate(%s) = %v, want nil", show(nj), err)
		}
	}
	bad := []claim.NewJob{
		{},
		{Command: " "},
		{Command: "x", ID: "../x"},
		{Command: "x", MaxRetries: intp(0)},
		{Command: "x", BackoffBase: intp(3601)},
		{Command: "x", RunAt: t0, Delay: time.Second},
		{Command: "x", Cwd: "rel"},
		{Command: "x", Queue: "a/b"},
		{Command: "x", UniqueKey: "a\x00"},
		{Command: "x", Env: map[string]string{"": "1"}},
		{Command: "x", Timeout: durp(200 * 365 * 24 * time.Hour)},
	}
	for _, nj := range bad {
		if err := nj.Validate(); !errors.Is(err, claim.ErrInvalid) {
			t.Errorf("Validate(%s) = %v, want ErrInvalid", show(nj), err)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"command": "echo hi"}`,
		`{"id": "nightly-db", "command": "pg_dump", "max_retries": 3, "backoff_base": 2,
			"priority": 0, "queue": "default", "run_at": "2026-11-21T03:00:00Z", "timeout": "30m",
			"env": {"PGHOST": "db1"}, "cwd": "/srv/app", "unique_key": "nightly-db"}`,
		`{"command": "x", "delay": 90}`, `{"command": "x", "delay": "-1s"}`,
		`{"command": "x", "timeout": 1e99}`, `{"command": "x", "timeout": "9999999999h"}`,
		`{"command": "x", "dead": {"attempts": 3}}`, `{"command": "x", "comand": 1}`,
		`{"command": "x"} {}`, `{"command": "x"`, "{\"command\": \"\xff\"}",
		`{"command": "x", "env": {"A": 1}}`, `{"COMMAND": "x"}`, `{"command": "x", "max_retries": 1e3}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nj, err := claim.ParseSpec(data)
		if err != nil {
			if !errors.Is(err, claim.ErrInvalid) {
				t.Fatalf("ParseSpec(%q) = %v, want it to wrap ErrInvalid", data, err)
			}
			return
		}
		if err := nj.Validate(); err != nil {
			t.Fatalf("ParseSpec(%q) = %s, which fails Validate: %v", data, show(nj), err)
		}
		if strings.TrimSpace(nj.Command) == "" {
			t.Fatalf("ParseSpec(%q) accepted a blank command", data)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, seed := range []string{"", "0", "90", "90s", "1h30m", "-1s", "-5", "1.5", "1e3",
		"9223372036854775807", "2562047h", "3153600000", " 5m ", "+5", "0x10", ".5s"} {
		f.Add(seed)
	}
	const maxDuration = 100 * 365 * 24 * time.Hour
	f.Fuzz(func(t *testing.T, s string) {
		d, err := claim.ParseDuration(s)
		if err != nil {
			if !errors.Is(err, claim.ErrInvalid) {
				t.Fatalf("ParseDuration(%q) = %v, want it to wrap ErrInvalid", s, err)
			}
			return
		}
		if d < 0 || d > maxDuration {
			t.Fatalf("ParseDuration(%q) = %v, want 0 to 100 years", s, d)
		}
	})
}

// TestInputDoorsAgree: what the spool accepts, enqueue accepts, and the
// bounds of a spec are those of config set.
func TestInputDoorsAgree(t *testing.T) {
	nj, err := claim.ParseSpec([]byte("\xef\xbb\xbf{\"command\": \"x\"}"))
	if err != nil || nj.Command != "x" {
		t.Errorf("ParseSpec with a UTF-8 BOM = %s, %v; want the job, as the spool reads it", show(nj), err)
	}
	for _, tc := range []struct {
		nj   claim.NewJob
		want string
	}{
		{claim.NewJob{Command: "x", Env: map[string]string{"A": "a\x00b"}}, `env A's value contains a NUL byte`},
		{claim.NewJob{Command: "x", MaxRetries: intp(1_000_000_000)}, "give 1 to 1000"},
		{claim.NewJob{Command: "x", MaxRetries: intp(1001)}, "give 1 to 1000"},
	} {
		if err := tc.nj.Validate(); !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%s) = %v, want ErrInvalid saying %q", show(tc.nj), err, tc.want)
		}
	}
	if err := (&claim.NewJob{Command: "x", MaxRetries: intp(1000)}).Validate(); err != nil {
		t.Errorf("Validate(max_retries 1000) = %v, want nil", err)
	}
}

// TestEnvOverTheExecLimit: entries each under MAX_ARG_STRLEN that together
// pass what exec takes are refused at enqueue, not at every run.
func TestEnvOverTheExecLimit(t *testing.T) {
	env := map[string]string{}
	for i := range 40 {
		env[fmt.Sprintf("V%02d", i)] = strings.Repeat("x", 100_000)
	}
	nj := claim.NewJob{Command: "x", Env: env}
	if err := nj.Validate(); !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), "together") {
		t.Errorf("Validate(40 env entries of 100 KB) = %v, want ErrInvalid saying they are too big together", err)
	}
	delete(env, "V00")
	for i := 1; i < 40; i++ {
		if i >= 10 {
			delete(env, fmt.Sprintf("V%02d", i))
		}
	}
	if err := nj.Validate(); err != nil {
		t.Errorf("Validate(9 env entries of 100 KB) = %v, want nil", err)
	}
}

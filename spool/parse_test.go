package spool

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func TestParseGood(t *testing.T) {
	runAt := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		file  string
		check func(claim.NewJob) bool
	}{
		{"minimal.json", func(nj claim.NewJob) bool {
			return nj.Command == "echo hi" && nj.ID == "" && nj.MaxRetries == nil && !nj.Redrive
		}},
		{"full.json", func(nj claim.NewJob) bool {
			return nj.ID == "nightly-db" && nj.Command == "pg_dump app > /backup/app.sql" &&
				*nj.MaxRetries == 3 && *nj.BackoffBase == 2 && nj.Priority == 5 && nj.Queue == "backups" &&
				nj.RunAt.Equal(runAt) && *nj.Timeout == 30*time.Minute && nj.Env["PGHOST"] == "db1" &&
				nj.Cwd == "/srv/app" && nj.UniqueKey == "nightly-db"
		}},
		{"seconds.json", func(nj claim.NewJob) bool { return nj.Delay == 90*time.Second && *nj.Timeout == 15*time.Second }},
		{"delay.json", func(nj claim.NewJob) bool { return nj.Delay == 90*time.Second && nj.Priority == -3 }},
		{"bom.json", func(nj claim.NewJob) bool { return nj.Command == "echo bom" }},
		{"unicode.json", func(nj claim.NewJob) bool { return nj.Command == `echo "grüße" ✓` }},
		{"nulls.json", func(nj claim.NewJob) bool { return nj.ID == "x" && nj.Timeout == nil && nj.Delay == 0 }},
		{"dead.json", func(nj claim.NewJob) bool { return nj.ID == "flaky-7" && nj.Redrive && *nj.MaxRetries == 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := mustRead(t, filepath.Join("testdata", "good", tt.file))
			nj, err := Parse(tt.file, data)
			if err != nil {
				t.Fatalf("Parse(%q) = %v, want no error", tt.file, err)
			}
			if !tt.check(nj) {
				t.Errorf("Parse(%q) = %+v, not as expected", tt.file, nj)
			}
		})
	}
	assertAllCovered(t, "good", len(tests))
}

func TestParseBad(t *testing.T) {
	tests := []struct{ file, want string }{
		{"not_json.json", "not valid JSON"},
		{"empty.json", "empty"},
		{"blank.json", "empty"},
		{"truncated.json", "truncated"},
		{"array.json", "must be a JSON object"},
		{"unknown_field.json", `unknown field "comand"`},
		{"bad_id.json", `id "-bad id" is not valid`},
		{"missing_command.json", `missing "command"`},
		{"empty_command.json", `empty "command"`},
		{"command_number.json", `"command" must be a JSON string`},
		{"two_objects.json", "data after its closing brace"},
		{"run_at_and_delay.json", "both run_at and delay"},
		{"bad_run_at.json", "not an RFC 3339 time"},
		{"negative_delay.json", "negative"},
		{"zero_retries.json", "max_retries is 0"},
		{"relative_cwd.json", "not an absolute path"},
		{"bad_env.json", `env name "A=B"`},
		{"not_utf8.json", "not valid UTF-8"},
		{"trailing_comma.json", "not valid JSON"},
		{"binary.json", "not valid UTF-8"},
		{"utf16.json", "not valid UTF-8"},
		{"nul_raw.json", `invalid character '\x00' in string literal`},
		{"nul_escaped.json", "the command contains a NUL byte"},
		{"nul_in_env.json", `env name "A\x00B" is not valid`},
		{"nul_in_queue.json", `queue "a\x00" is not valid`},
		{"id_slash.json", `id "etc/passwd" is not valid`},
		{"id_dotdot.json", `id ".." is not valid`},
		{"id_traversal.json", `id "../../../tmp/x" is not valid`},
		{"id_too_long.json", "is not valid: use 1 to 128 letters"},
		{"bad_queue.json", `queue "../q" is not valid`},
		{"empty_queue.json", `queue "" is not valid`},
		{"wrong_type_retries.json", `"max_retries" must be a whole number, not a JSON string`},
		{"wrong_type_priority.json", `"priority" must be a whole number, not a JSON number 1.5`},
		{"wrong_type_env.json", `"env" must be a JSON object of strings, not a JSON array`},
		{"wrong_type_env_value.json", `the values in "env" must be JSON strings, not a JSON number`},
		{"wrong_type_timeout.json", `timeout: "true" is not a duration`},
		{"wrong_type_id.json", `"id" must be a JSON string, not a JSON number`},
		{"command_object.json", `"command" must be a JSON string, not a JSON object`},
		{"huge_number.json", `"max_retries" must be a whole number, not a JSON number 99999999999999999999`},
		{"huge_timeout.json", "over 100 years"},
		{"bad_backoff.json", "backoff_base is 0"},
		{"deeply_nested.json", "exceeded max depth"},
		{"nested_wrong_type.json", `the values in "env" must be JSON strings, not a JSON array`},
		{"whitespace_command.json", `empty "command"`},
		{"just_string.json", "must be a JSON object, not a JSON string"},
		{"null.json", `missing "command"`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := mustRead(t, filepath.Join("testdata", "bad", tt.file))
			_, err := Parse(tt.file, data)
			if err == nil || !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) = %v, want an ErrInvalid saying %q", tt.file, err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.file+": ") {
				t.Errorf("Parse(%q) = %v, want the file name first", tt.file, err)
			}
		})
	}
	assertAllCovered(t, "bad", len(tests))
}

func TestParseTooBig(t *testing.T) {
	// Valid JSON, but padded over the limit: the size alone decides.
	data := append([]byte(`{"command": "echo hi"}`), bytes.Repeat([]byte(" "), MaxSize)...)
	_, err := Parse("big.json", data)
	if !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), "over the limit of 1 MiB") {
		t.Fatalf("Parse(big.json) = %v, want an ErrInvalid about 1 MiB", err)
	}
	if _, err := Parse("max.json", data[:MaxSize]); err != nil {
		t.Fatalf("Parse(exactly 1 MiB) = %v, want no error", err)
	}
}

// A file is rejected before it settles only when no writer could finish
// it: broken is true of JSON wrong before its end, and of no part of what
// a writer may still be appending to.
func TestBroken(t *testing.T) {
	tests := []struct {
		data string
		want bool
	}{
		{"not json\n", true},
		{`{"command": "x",}`, true},
		{`{"command": "a"} {"command": "b"}`, true},
		{`{"command": "a"} x`, true},
		{`{"command": "a"}}`, true},
		{"\xff\xfe{\x00", true},
		{`{"command" "x"}`, true},
		{`{"command": "x"`, false},
		{`{"command": "x"}`, false}, // complete: not broken, whatever Parse says
		{`{"command": "x"} `, false},
		{`{"command": "x"} {`, true},
		{`{"command": tr`, false},
		{`{"retries": 1`, false},
		{`{"retries": -`, false},
		{`{"retries": 1.`, false},
		{`{"retries": 1e`, false},
		{`{"command": "\u00`, false},
		{"{\"command\": \"gr\xc3", false}, // cut inside a UTF-8 sequence
		{"", false},
		{" \n", false},
		{"\xef", false}, // a byte order mark being written
		{"\xef\xbb", false},
		{"\xef\xbb\xbf", false},
		{"\xef\xbb\xbf{", false},
		{"\xef\xbbx", true},
		// a hole a writer out of order has yet to fill, or a preallocation
		{"{\"command\": \"ec\x00\x00\x00\x00", false},
		{"{\"command\": \"echo\"}\x00\x00", false},
		{"\x00\x00\x00", false},
	}
	for _, tt := range tests {
		if got := broken([]byte(tt.data)); got != tt.want {
			t.Errorf("broken(%q) = %v, want %v", tt.data, got, tt.want)
		}
	}
	// No part of a good file, as a writer appends it, is broken.
	files, _ := filepath.Glob(filepath.Join("testdata", "good", "*.json"))
	for _, file := range files {
		data := mustRead(t, file)
		for n := range len(data) {
			if broken(data[:n]) {
				t.Errorf("broken(%q) = true, want false: its first %d bytes of %s", data[:n], n, file)
			}
		}
	}
}

// FuzzParse checks that Parse never panics, that every error is an
// ErrInvalid, that what it accepts passes Validate, and that it accepts
// only complete JSON, no part of which is broken: the watcher relies on
// that to wait for partial writes.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"good", "bad"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nj, err := Parse("fuzz.json", data)
		if err != nil {
			if !errors.Is(err, claim.ErrInvalid) {
				t.Fatalf("Parse(%q) = %v, want an ErrInvalid", data, err)
			}
			return
		}
		if err := nj.Validate(); err != nil {
			t.Fatalf("Parse(%q) accepted a job that Validate refuses: %v", data, err)
		}
		if !complete(data) {
			t.Fatalf("Parse(%q) accepted data that is not complete JSON", data)
		}
		if len(data) > MaxSize {
			t.Fatalf("Parse accepted %d bytes", len(data))
		}
		for n := range min(len(data), 4096) { // each prefix costs its length: only the first few KiB
			if broken(data[:n]) {
				t.Fatalf("broken(%q) = true, but Parse accepts %q, which a writer appending may be writing", data[:n], data)
			}
		}
	})
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// assertAllCovered fails when a testdata file has no row in its table.
func assertAllCovered(t *testing.T, dir string, rows int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil || len(files) != rows {
		t.Errorf("testdata/%s has %d files, the table %d rows", dir, len(files), rows)
	}
}

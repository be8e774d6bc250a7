package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

// now is the fixed clock of every test, so ages in golden files never move.
var now = time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

func intp(n int) *int { return &n }

// printer returns a Printer writing into the returned buffer.
func printer(json, color bool) (Printer, *bytes.Buffer) {
	var buf bytes.Buffer
	return Printer{Out: &buf, JSON: json, Color: color, Now: func() time.Time { return now }}, &buf
}

// golden compares got with testdata/<test name>.golden, or rewrites the
// file under -update.
func golden(t *testing.T, got []byte) {
	t.Helper()
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test ./report -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// sampleJobs covers every state and the awkward cells: a long command, a
// multi-line one, an escape sequence, no exit code, a wide character.
func sampleJobs() []claim.Job {
	return []claim.Job{
		{ID: "nightly-db", Command: "pg_dump app > /backup/app.sql", State: claim.Pending,
			MaxRetries: 3, BackoffBase: 2, Queue: "default", RunAt: now.Add(3 * time.Hour),
			RunAfter: now.Add(3 * time.Hour), CreatedAt: ago(10 * time.Minute), UpdatedAt: ago(10 * time.Minute)},
		{ID: "build-42", Command: "make -C /srv/app build test install && echo done with the whole thing, finally",
			State: claim.Processing, Attempts: 1, MaxRetries: 3, BackoffBase: 2, Priority: 5, Queue: "ci",
			Runs: 1, WorkerID: "w-host-123", LeaseUntil: now.Add(25 * time.Second),
			CreatedAt: ago(2 * time.Minute), UpdatedAt: ago(90 * time.Second)},
		{ID: "report", Command: "set -e\ncd /tmp\n./gen-report", State: claim.Completed,
			Attempts: 1, MaxRetries: 3, BackoffBase: 2, Queue: "default", Runs: 1, ExitCode: intp(0),
			CreatedAt: ago(3 * time.Hour), UpdatedAt: ago(2 * time.Hour), FinishedAt: ago(2 * time.Hour)},
		{ID: "flaky", Command: "curl -f https://example.com/\x1b[2J", State: claim.Failed,
			Attempts: 2, MaxRetries: 3, BackoffBase: 2, Queue: "default", Runs: 2, ExitCode: intp(22),
			LastError: "exit status 22", RunAfter: now.Add(4 * time.Second),
			CreatedAt: ago(30 * time.Second), UpdatedAt: ago(4 * time.Second)},
		{ID: "wide", Command: "echo 日本語", State: claim.Dead, Attempts: 3, MaxRetries: 3,
			BackoffBase: 2, Queue: "default", Runs: 3, ExitCode: intp(1), LastError: "exit status 1",
			CreatedAt: ago(72 * time.Hour), UpdatedAt: ago(50 * time.Hour), FinishedAt: ago(50 * time.Hour)},
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, map[string]string{"command": "a > b && c"}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"command\": \"a > b && c\"\n}\n"
	if buf.String() != want {
		t.Errorf("WriteJSON = %q, want %q", buf.String(), want)
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0ms"},
		{350 * time.Millisecond, "350ms"},
		{1200 * time.Millisecond, "1.2s"},
		{42*time.Second + 400*time.Millisecond, "42s"},
		{4*time.Minute + 10*time.Second, "4m10s"},
		{5 * time.Minute, "5m"},
		{59*time.Minute + 59*time.Second + 600*time.Millisecond, "1h"},
		{2*time.Hour + 5*time.Minute + 10*time.Second, "2h5m"},
	}
	for _, tt := range tests {
		if got := duration(tt.d); got != tt.want {
			t.Errorf("duration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestAge(t *testing.T) {
	p, _ := printer(false, false)
	tests := []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{now, "just now"},
		{ago(4 * time.Second), "4s ago"},
		{ago(3*time.Minute + 59*time.Second), "3m ago"},
		{ago(2 * time.Hour), "2h ago"},
		{ago(47 * time.Hour), "47h ago"},
		{ago(72 * time.Hour), "3d ago"},
		{now.Add(90 * time.Second), "in 1m"},
	}
	for _, tt := range tests {
		if got := p.age(tt.t); got != tt.want {
			t.Errorf("age(%v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestCommandCell(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"echo hi", "echo hi"},
		{"a\nb\r\nc", "a⏎b⏎c"},
		{"a\tb\x1b[2Jc", "a b [2Jc"},
		{strings.Repeat("x", 60), strings.Repeat("x", 60)},
		{strings.Repeat("x", 61), strings.Repeat("x", 59) + "…"},
		{strings.Repeat("日", 40), strings.Repeat("日", 29) + "…"},
	}
	for _, tt := range tests {
		if got := command(tt.in); got != tt.want {
			t.Errorf("command(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

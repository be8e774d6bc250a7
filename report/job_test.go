package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func TestJobs(t *testing.T) {
	tests := []struct {
		name        string
		jobs        []claim.Job
		json, color bool
	}{
		{"empty text", nil, false, false},
		{"empty json", nil, true, false},
		{"text", sampleJobs(), false, false},
		{"color", sampleJobs(), false, true},
		{"json", sampleJobs(), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, buf := printer(tt.json, tt.color)
			if err := p.Jobs(tt.jobs); err != nil {
				t.Fatal(err)
			}
			golden(t, buf.Bytes())
		})
	}
}

func TestJobsEmptyJSONIsArray(t *testing.T) {
	for _, jobs := range [][]claim.Job{nil, {}} {
		p, buf := printer(true, false)
		if err := p.Jobs(jobs); err != nil {
			t.Fatal(err)
		}
		if buf.String() != "[]\n" {
			t.Errorf("Jobs(%#v) JSON = %q, want %q", jobs, buf.String(), "[]\n")
		}
	}
}

// Colour must not shift columns: with the escape codes removed, the
// coloured table is the plain one.
func TestJobsColorKeepsAlignment(t *testing.T) {
	plain, pbuf := printer(false, false)
	color, cbuf := printer(false, true)
	if err := plain.Jobs(sampleJobs()); err != nil {
		t.Fatal(err)
	}
	if err := color.Jobs(sampleJobs()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cbuf.String(), "\x1b[31mdead\x1b[0m") {
		t.Errorf("coloured table has no red dead:\n%q", cbuf.String())
	}
	if got := stripANSI(cbuf.String()); got != pbuf.String() {
		t.Errorf("coloured table without escapes =\n%s\nwant\n%s", got, pbuf.String())
	}
	if strings.Contains(pbuf.String(), "\x1b") {
		t.Errorf("plain table has escape codes:\n%q", pbuf.String())
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestJobJSONFields(t *testing.T) {
	j := sampleJobs()[0]
	j.Env = map[string]string{"PGHOST": "db1"}
	j.Timeout = 30 * time.Minute
	data, err := json.Marshal(JobJSON(j))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "command", "state", "attempts", "max_retries", "backoff_base",
		"priority", "queue", "run_count", "created_at", "updated_at", "run_at", "run_after", "timeout", "env_names"} {
		if _, ok := got[k]; !ok {
			t.Errorf("JobJSON(%s) has no %q: %s", j.ID, k, data)
		}
	}
	for _, k := range []string{"lost", "worker", "lease_until", "exit_code", "finished_at", "last_error", "cwd", "env"} {
		if _, ok := got[k]; ok {
			t.Errorf("JobJSON(%s) has unset %q: %s", j.ID, k, data)
		}
	}
	if got["created_at"] != "2026-11-21T05:50:00Z" || got["timeout"] != "30m0s" {
		t.Errorf("JobJSON(%s) created_at, timeout = %v, %v; want 2026-11-21T05:50:00Z, 30m0s", j.ID, got["created_at"], got["timeout"])
	}
}

func TestJob(t *testing.T) {
	j := sampleJobs()[3]
	j.Env = map[string]string{"PGHOST": "db1", "GREETING": "hello world"}
	j.Cwd, j.UniqueKey, j.Timeout, j.Lost = "/srv/app", "flaky-key", 90*time.Second, 1
	runs := []claim.Run{
		{JobID: j.ID, Attempt: 1, WorkerID: "w-a", Host: "box", PID: 100, StartedAt: ago(30 * time.Second),
			EndedAt: ago(29 * time.Second), Outcome: claim.OutcomeLost, Error: "worker lost",
			StdoutPath: "/home/u/.queuectl/logs/flaky/1.out", StderrPath: "/home/u/.queuectl/logs/flaky/1.err"},
		{JobID: j.ID, Attempt: 2, WorkerID: "w-b", Host: "box", PID: 200, StartedAt: ago(5 * time.Second),
			EndedAt: ago(4*time.Second + 650*time.Millisecond), Outcome: claim.OutcomeFailed, ExitCode: intp(22),
			Error: "exit status 22", StdoutPath: "/home/u/.queuectl/logs/flaky/2.out", StderrPath: "/home/u/.queuectl/logs/flaky/2.err"},
		{JobID: j.ID, Attempt: 3, WorkerID: "w-b", Host: "box", PID: 201, StartedAt: ago(1200 * time.Millisecond),
			StdoutPath: "/home/u/.queuectl/logs/flaky/3.out", StderrPath: "/home/u/.queuectl/logs/flaky/3.err"},
	}
	tests := []struct {
		name        string
		job         claim.Job
		runs        []claim.Run
		json, color bool
		env         bool // show --env
	}{
		{"text", j, runs, false, false, false},
		{"color", j, runs, false, true, false},
		{"json", j, runs, true, false, false},
		{"env text", j, nil, false, false, true},
		{"env json", j, nil, true, false, true},
		{"no runs text", sampleJobs()[0], nil, false, false, false},
		{"no runs json", sampleJobs()[0], nil, true, false, false},
		{"completed text", sampleJobs()[2], nil, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, buf := printer(tt.json, tt.color)
			p.Env = tt.env
			if err := p.Job(tt.job, tt.runs); err != nil {
				t.Fatal(err)
			}
			if shown := strings.Contains(buf.String(), "hello world"); shown != tt.env && tt.job.Env != nil {
				t.Errorf("the env value shown: %v, want %v (show --env)", shown, tt.env)
			}
			golden(t, buf.Bytes())
		})
	}
}

// show of a finished job names what it ran after, in text and JSON, once
// nothing is left to wait on.
func TestJobNamesWhatItRanAfter(t *testing.T) {
	j := sampleJobs()[2]
	j.After = []string{"build", "fetch"}
	p, buf := printer(false, false)
	if err := p.Job(j, nil); err != nil {
		t.Fatal(err)
	}
	if text := buf.String(); !strings.Contains(text, "\nafter: build fetch\n") {
		t.Errorf("show of a job after build and fetch:\n%s\nwant a line after: build fetch", text)
	}
	p, buf = printer(true, false)
	if err := p.Job(j, nil); err != nil {
		t.Fatal(err)
	}
	var o struct{ After []string }
	if err := json.Unmarshal(buf.Bytes(), &o); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.After, j.After) {
		t.Errorf("show --json: after = %v, want %v", o.After, j.After)
	}
}

// show of a job whose runs ran on another host: their files are named
// host:path, and the latest run's output is printed from the tails kept
// with it (cut to its last 64 KiB, which the heading says).
func TestJobOtherHost(t *testing.T) {
	j := sampleJobs()[4]
	big := strings.Repeat("x", claim.TailBytes-6) + "\nlast\n"
	runs := []claim.Run{
		{JobID: j.ID, Attempt: 1, WorkerID: "db1-1-1", Host: "db1/0a1b2c3d", PID: 100, StartedAt: ago(30 * time.Second),
			EndedAt: ago(29 * time.Second), Outcome: claim.OutcomeFailed, ExitCode: intp(1), Error: "exit status 1",
			StdoutPath: "/home/u/.queuectl/logs/x/1.out", StderrPath: "/home/u/.queuectl/logs/x/1.err",
			Tails: &claim.Tails{Stdout: claim.Tail{Data: []byte("one\n"), Size: 4}}},
		{JobID: j.ID, Attempt: 2, WorkerID: "db1-1-1", Host: "db1/0a1b2c3d", PID: 100, StartedAt: ago(5 * time.Second),
			EndedAt: ago(4 * time.Second), Outcome: claim.OutcomeFailed, ExitCode: intp(2), Error: "exit status 2",
			StdoutPath: "/home/u/.queuectl/logs/x/2.out", StderrPath: "/home/u/.queuectl/logs/x/2.err",
			Tails: &claim.Tails{Stdout: claim.Tail{Data: []byte(big), Size: 200 << 10},
				Stderr: claim.Tail{Data: []byte("no such table"), Size: 13}}},
	}
	for _, json := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "json"}[json], func(t *testing.T) { showOtherHost(t, j, runs, json) })
	}
}

func showOtherHost(t *testing.T, j claim.Job, runs []claim.Run, json bool) {
	{
		p, buf := printer(json, false)
		p.Host = "here/ffffffff"
		p.FromTail = func(r claim.Run, stderr bool) bool { return r.Host != p.Host }
		if err := p.Job(j, runs); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		end := "x\nlast\n"
		if json {
			end = `x\nlast\n"`
		}
		for _, want := range []string{"db1:/home/u/.queuectl/logs/x/2.out", "no such table", end} {
			if !strings.Contains(out, want) {
				t.Errorf("show (json %v) does not mention %q:\n%.2000s", json, want, out)
			}
		}
		// The golden keeps the long tail out; its end is checked above.
		golden(t, []byte(strings.ReplaceAll(out, strings.Repeat("x", 60), "")))
	}
}

func TestDeadJobs(t *testing.T) {
	dead := sampleJobs()[4:]
	dead = append(dead, claim.Job{ID: "lost-job", Command: "sleep 100", State: claim.Dead,
		MaxRetries: 3, Queue: "default", Runs: 5, Lost: 5, LastError: "worker lost 5 times",
		CreatedAt: ago(time.Hour), UpdatedAt: ago(10 * time.Minute), FinishedAt: ago(10 * time.Minute)})
	var withLines []DeadJob
	for i, j := range dead {
		withLines = append(withLines, DeadJob{Job: j})
		if i == 0 {
			withLines[i].LastStderr = "pg_dump: error: connection to server failed"
		}
	}
	tests := []struct {
		name string
		jobs []DeadJob
		json bool
	}{
		{"text", withLines, false},
		{"json", withLines, true},
		{"empty json", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, buf := printer(tt.json, false)
			if err := p.DeadJobs(tt.jobs); err != nil {
				t.Fatal(err)
			}
			golden(t, buf.Bytes())
		})
	}
}

// awkwardDeadJobs are dead jobs with every field a dead job can carry and
// the strings that are hard to lay out or to encode: what `dlq list`
// writes for them is pinned in golden files.
func awkwardDeadJobs() []DeadJob {
	base := claim.Job{ID: "full", Command: "run", State: claim.Dead, Attempts: 3, MaxRetries: 3,
		BackoffBase: 2, Priority: -4, Queue: "q", Runs: 7, Lost: 2, Timeout: 90 * time.Second,
		Env: map[string]string{"B": "2", "A": "1"}, Cwd: "/srv", UniqueKey: "u", Label: "nightly",
		Hooks: claim.Hooks{OnSuccess: "s", OnFailure: "f", OnDead: "d"}, DeadBy: "a",
		LastError: "exit status 3", ExitCode: intp(3), CreatedAt: ago(3 * time.Hour),
		UpdatedAt: ago(time.Hour), FinishedAt: ago(time.Hour)}
	jobs := []DeadJob{{Job: base, LastStderr: "fatal: no"}}
	limited := base
	limited.ID, limited.Limits = "limited", claim.Limits{Memory: 1 << 20}
	jobs = append(jobs, DeadJob{Job: limited, LastStderr: "killed: out of memory"})
	unfinished := base // died before finished_at was kept: DIED is its last change
	unfinished.ID, unfinished.FinishedAt, unfinished.ExitCode = "unfinished", time.Time{}, nil
	jobs = append(jobs, DeadJob{Job: unfinished})
	for i, s := range tricky {
		j := base
		j.ID, j.Command, j.LastError = fmt.Sprintf("tricky-%d", i), s, s
		jobs = append(jobs, DeadJob{Job: j, LastStderr: s})
	}
	long := base
	long.ID, long.Command = "long", strings.Repeat("make all ", 20)
	long.LastError = "exit status 2: " + strings.Repeat("x", 80)
	return append(jobs, DeadJob{Job: long, LastStderr: strings.Repeat("日本語", 30)})
}

func TestDeadJobsAwkward(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "json"}[asJSON], func(t *testing.T) {
			p, buf := printer(asJSON, false)
			if err := p.DeadJobs(awkwardDeadJobs()); err != nil {
				t.Fatal(err)
			}
			golden(t, buf.Bytes())
		})
	}
}

func TestFailedJobJSONHasNextRetryAt(t *testing.T) {
	at := time.Date(2026, 11, 21, 6, 0, 4, 0, time.UTC)
	for _, tt := range []struct {
		state claim.State
		want  string
	}{{claim.Failed, "2026-11-21T06:00:04Z"}, {claim.Pending, ""}, {claim.Dead, ""}} {
		o := JobJSON(claim.Job{ID: "j", State: tt.state, RunAfter: at})
		if o.NextRetryAt != tt.want {
			t.Errorf("JobJSON(%s job).NextRetryAt = %q, want %q", tt.state, o.NextRetryAt, tt.want)
		}
	}
}

// A failed job's REASON says when it retries, as an age; once due, that it
// is due, and what holds it back (its queue paused or at its limit). Its
// JSON keeps pending_reason for pending jobs (next_retry_at says it there).
func TestFailedJobReasonSaysRetry(t *testing.T) {
	for _, tt := range []struct {
		after    time.Duration
		heldBack string
		want     string
	}{{28*time.Second + 400*time.Millisecond, "", "retry in 28s"}, {10 * time.Minute, "", "retry in 10m"},
		{-time.Second, "", "retry due"}, {-time.Second, claim.ReasonPaused, "retry due, paused"},
		{-time.Second, claim.ReasonLimited, "retry due, limited"}} {
		j := claim.Job{ID: "flaky", Command: "exit 7", State: claim.Failed, Attempts: 1, MaxRetries: 2,
			Queue: "default", RunAfter: now.Add(tt.after), UpdatedAt: ago(time.Second), HeldBack: tt.heldBack}
		p, buf := printer(false, false)
		if err := p.Jobs([]claim.Job{j}); err != nil {
			t.Fatal(err)
		}
		row := strings.Split(buf.String(), "\n")[1]
		if !regexp.MustCompile(`^flaky +failed +` + tt.want + ` +1/2 `).MatchString(row) {
			t.Errorf("Jobs(failed job, retry at now%+v) row = %q, want REASON %q", tt.after, row, tt.want)
		}
		if o := JobJSON(j); o.PendingReason != "" {
			t.Errorf("JobJSON(failed job).PendingReason = %q, want none", o.PendingReason)
		}
	}
}

// A streamed list longer than a block writes its header once and every
// row, and its JSON is the array WriteJSON writes for the whole list.
func TestJobStreamOfManyBlocks(t *testing.T) {
	var jobs []claim.Job
	for i := range 2*streamBlock + 500 {
		j := sampleJobs()[i%5]
		j.ID = fmt.Sprintf("%s-%d", j.ID, i)
		jobs = append(jobs, j)
	}
	p, buf := printer(false, false)
	if err := p.Jobs(jobs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(jobs)+1 || !strings.HasPrefix(lines[0], "ID ") || strings.Count(buf.String(), "ATTEMPTS") != 1 {
		t.Errorf("%d lines, first %q; want a header and %d rows", len(lines), lines[0], len(jobs))
	}
	p, buf = printer(true, false)
	if err := p.Jobs(jobs); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := WriteJSON(&want, JobsJSON(jobs)); err != nil {
		t.Fatal(err)
	}
	if buf.String() != want.String() {
		t.Errorf("streamed JSON differs from WriteJSON's (%d bytes, want %d)", buf.Len(), want.Len())
	}
}

// An error from the stream ends the output and is returned.
func TestJobStreamError(t *testing.T) {
	boom := errors.New("boom")
	for _, asJSON := range []bool{false, true} {
		p, _ := printer(asJSON, false)
		err := p.JobStream(func(yield func(claim.Job, error) bool) {
			if yield(sampleJobs()[0], nil) {
				yield(claim.Job{}, boom)
			}
		})
		if !errors.Is(err, boom) {
			t.Errorf("JobStream (json %v) = %v, want boom", asJSON, err)
		}
	}
}

// TestShowNamesOnlyFilesThatExist: a stream that printed nothing has no
// file, and show says so instead of naming one.
func TestShowNamesOnlyFilesThatExist(t *testing.T) {
	p, buf := printer(false, false)
	p.Printed = func(r claim.Run, stderr bool) bool { return stderr }
	code := 2
	runs := []claim.Run{
		{JobID: "x", Attempt: 1, WorkerID: "w", StartedAt: ago(time.Minute), EndedAt: ago(time.Second), Outcome: "failed",
			ExitCode: &code, StdoutPath: "/q/logs/x/1.out", StderrPath: "/q/logs/x/1.err"},
		{JobID: "x", Attempt: 2, WorkerID: "w", StartedAt: ago(0), StdoutPath: "/q/logs/x/2.out", StderrPath: "/q/logs/x/2.err"},
	}
	if err := p.Job(claim.Job{ID: "x", Command: "make", State: claim.Processing}, runs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`(?m)^1 .* \(no output\) +/q/logs/x/1\.err$`, `(?m)^2 .* \(no output yet\) +/q/logs/x/2\.err$`} {
		if !regexp.MustCompile(want).MatchString(buf.String()) {
			t.Errorf("show =\n%s\nwant a line matching %s", buf, want)
		}
	}
	if strings.Contains(buf.String(), ".out") {
		t.Errorf("show names a stdout file that does not exist:\n%s", buf)
	}
}

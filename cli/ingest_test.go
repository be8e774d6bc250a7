package cli

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// drop writes n job files into the spool the way a careful writer does
// (write .tmp, rename), returning once all are in place. Jobs with an even
// index carry an id; odd ones get a generated id, so a file ingested twice
// would show as a 2,001st job rather than as a conflict.
func drop(t *testing.T, h *qhome, n int, command func(i int) string) {
	t.Helper()
	spoolDir := filepath.Join(h.dir, "spool")
	for i := 0; i < n; i++ {
		spec := map[string]any{"command": command(i)}
		if i%2 == 0 {
			spec["id"] = fmt.Sprintf("f%05d", i)
		}
		data, _ := json.Marshal(spec)
		tmp := filepath.Join(spoolDir, fmt.Sprintf("f%05d.json.tmp", i))
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(spoolDir, fmt.Sprintf("f%05d.json", i))); err != nil {
			t.Fatal(err)
		}
	}
}

func spoolLeft(t *testing.T, h *qhome) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(h.dir, "spool"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Type().IsRegular() {
			n++
		}
	}
	return n
}

func TestDroppedFileRunsWithWorkerRunning(t *testing.T) {
	h := newHome(t)
	h.must("status") // creates the home
	h.start("worker", "start")
	out := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(filepath.Join(h.dir, "spool", "hello.json"),
		[]byte(`{"id": "hello", "command": "echo hi > `+out+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the file to become a job", func() bool {
		_, _, code := h.run("show", "hello")
		return code == 0
	})
	h.must("wait", "--timeout", "20s", "hello")
	if got := lines(t, out); got["hi"] != 1 {
		t.Errorf("job output %v, want hi", got)
	}
	if n := spoolLeft(t, h); n != 0 {
		t.Errorf("%d files left in spool/, want 0", n)
	}
}

func TestSpoolDropManyWorkersEachJobOnce(t *testing.T) {
	const n = 2000
	h := newHome(t)
	h.must("status")
	out := filepath.Join(t.TempDir(), "out")
	drop(t, h, n, func(i int) string { return fmt.Sprintf("echo %d >> %s", i, out) })
	var workers []*proc
	for i := 0; i < 3; i++ {
		workers = append(workers, h.start("worker", "start", "--count", "4"))
	}
	waitFor(t, 3*time.Minute, "all jobs to complete", func() bool {
		return spoolLeft(t, h) == 0 && h.count("completed") == n
	})
	h.must("worker", "stop", "--wait", "--timeout", "30s")
	for _, w := range workers {
		if code := w.exit(t, 30*time.Second); code != 0 {
			t.Errorf("worker exit %d\n%s", code, w.stderr)
		}
	}
	seen := lines(t, out)
	if len(seen) != n {
		t.Errorf("%d distinct job outputs, want %d", len(seen), n)
	}
	for l, c := range seen {
		if c != 1 {
			t.Errorf("job %s ran %d times", l, c)
		}
	}
	if total := len(h.listAll()); total != n {
		t.Errorf("%d jobs, want %d", total, n)
	}
}

// TestKillIngesterDuringDrop SIGKILLs `queuectl watch` at random instants
// while it ingests a 2,000-file drop, then lets a clean pass finish: exactly
// 2,000 jobs, nothing rejected, nothing left behind.
func TestKillIngesterDuringDrop(t *testing.T) {
	const n = 2000
	h := newHome(t)
	h.must("status")
	drop(t, h, n, func(i int) string { return "true" })
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	kills := 0
	for round := 0; round < 40 && spoolLeft(t, h) > 0; round++ {
		w := h.start("watch")
		time.Sleep(time.Duration(30+rng.Intn(120)) * time.Millisecond) // a random instant to kill at
		w.signal(t, syscall.SIGKILL)
		w.exit(t, 10*time.Second)
		kills++
	}
	t.Logf("%d kills; %d of %d jobs in before the final pass", kills, len(h.listAll()), n)
	h.must("ingest")
	if left := spoolLeft(t, h); left != 0 {
		t.Errorf("%d files left in spool/", left)
	}
	if total := len(h.listAll()); total != n {
		t.Errorf("%d jobs after %d kills, want exactly %d", total, kills, n)
	}
	rejected, _ := os.ReadDir(filepath.Join(h.dir, "rejected"))
	if len(rejected) != 0 {
		t.Errorf("%d files rejected, want 0 (a file ingested twice conflicts on its id)", len(rejected))
	}
}

func (h *qhome) listAll() []json.RawMessage {
	h.t.Helper()
	var jobs []json.RawMessage
	if err := json.Unmarshal([]byte(h.must("list", "--json")), &jobs); err != nil {
		h.t.Fatalf("list --json: %v", err)
	}
	return jobs
}

// `rejected retry` and `rejected purge` name the file they acted on; a name
// with a newline or an escape sequence is Go-quoted there, as in the
// worker's log, so that it can neither forge a line nor drive the terminal.
func TestRejectedCommandsQuoteControlCharacters(t *testing.T) {
	h := newHome(t)
	h.must("status") // creates the home
	name := "q\x1b[2Jz\nw.json"
	spoolDir := filepath.Join(h.dir, "spool")
	if err := os.WriteFile(filepath.Join(spoolDir, name), []byte(`{"command": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errText, code := h.run("ingest"); code != 0 || !strings.Contains(errText, `rejected "q\x1b[2Jz\nw.json": `) {
		t.Fatalf("ingest: exit %d, stderr %q; want the file rejected under its quoted name", code, errText)
	}
	for _, verb := range []string{"retry", "purge"} {
		out, errText, code := h.run("rejected", verb, name)
		if code != 0 || strings.ContainsAny(out, "\x1b") || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"q\x1b[2Jz\nw.json"`) {
			t.Errorf("rejected %s: exit %d, stdout %q, stderr %q; want one line naming the file Go-quoted", verb, code, out, errText)
		}
		if verb == "retry" {
			h.must("ingest") // rejected again, for purge
		}
	}
	if _, errText, code := h.run("rejected", "purge", name); code != 3 || strings.ContainsAny(errText, "\x1b") {
		t.Errorf("rejected purge of a purged name: exit %d, stderr %q; want 3 and the name quoted", code, errText)
	}
}

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// manyDead makes n dead jobs in h, each of which printed a line to
// stderr, and returns their ids, oldest first. The commands are long, so
// that a block of dlq list's table, or a batch of its JSON, is more than
// a pipe holds.
func manyDead(h *qhome, n int) []string {
	h.t.Helper()
	var specs strings.Builder
	for i := range n {
		cmd := fmt.Sprintf("echo 'nightly export %d failed: connection refused by db.internal:5432' >&2; exit 3", i)
		b, _ := json.Marshal(map[string]any{"command": cmd, "max_retries": 1})
		specs.Write(append(b, '\n'))
	}
	enqueue := h.command("enqueue", "-q", "-")
	enqueue.Stdin = strings.NewReader(specs.String())
	if out, err := enqueue.CombinedOutput(); err != nil {
		h.t.Fatalf("enqueue -: %v\n%s", err, out)
	}
	h.must("worker", "start", "--drain", "--count", "4", "--no-spool", "-q")
	return idsOf(h, "list", "--state", "dead", "--json")
}

// idsOf is the ids of the JSON list a command prints, in order.
func idsOf(h *qhome, args ...string) []string {
	h.t.Helper()
	var jobs []struct{ ID string }
	if err := json.Unmarshal([]byte(h.must(args...)), &jobs); err != nil {
		h.t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

// dlq list reads the store a page at a time and writes its first rows
// before it has read the whole queue: see dlqListPages and dlqListEnds.
// (One test: the two share a home of many dead jobs, slow to make.)
func TestDlqListStreams(t *testing.T) {
	h := newHome(t)
	ids := manyDead(h, deadPage+300)
	if len(ids) != deadPage+300 {
		t.Fatalf("%d dead jobs, want %d", len(ids), deadPage+300)
	}
	dlqListPages(t, h, ids)
	dlqListEnds(t, h, ids)
}

// dlqListPages: over several pages, with --limit and --newest, dlq list
// lists every dead job once, in list's order, each with its own stderr.
func dlqListPages(t *testing.T, h *qhome, ids []string) {
	newest := slices.Clone(ids)
	slices.Reverse(newest)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, ids},
		{[]string{"--newest"}, newest},
		{[]string{"--limit", fmt.Sprint(deadPage)}, ids[:deadPage]},
		{[]string{"--limit", fmt.Sprint(deadPage + 1)}, ids[:deadPage+1]},
		{[]string{"--newest", "--limit", fmt.Sprint(deadPage + 250)}, newest[:deadPage+250]},
		{[]string{"--limit", fmt.Sprint(2 * len(ids))}, ids},
	} {
		got := idsOf(h, append([]string{"dlq", "list", "--json"}, tt.args...)...)
		if !slices.Equal(got, tt.want) {
			t.Errorf("dlq list --json %v: %d ids (%.3q…), want %d (%.3q…)", tt.args, len(got), got, len(tt.want), tt.want)
		}
		table := h.must(append([]string{"dlq", "list"}, tt.args...)...)
		if n := strings.Count(table, "\n"); n != len(tt.want)+1 {
			t.Errorf("dlq list %v: %d lines, want %d", tt.args, n, len(tt.want)+1)
		}
	}
	// Each row says its own job's stderr, on every page.
	var jobs []struct {
		ID         string `json:"id"`
		Command    string `json:"command"`
		LastStderr string `json:"last_stderr_line"`
	}
	if err := json.Unmarshal([]byte(h.must("dlq", "list", "--json")), &jobs); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if !strings.Contains(j.Command, "'"+j.LastStderr+"'") {
			t.Fatalf("job %s: last_stderr_line %q, not what %q printed", j.ID, j.LastStderr, j.Command)
		}
	}
}

// dlqListEnds: dlq list writes its first rows before it has read the
// whole queue, and a reader gone away (`dlq list | head`) ends it there.
// The last dead job's stderr log is made a symbolic link, which dlq list
// refuses: a dlq list that reached it says so, and one that stopped
// before did not.
func dlqListEnds(t *testing.T, h *qhome, ids []string) {
	last := filepath.Join(h.dir, "logs", ids[len(ids)-1], "1.err")
	if err := os.Remove(last); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", last); err != nil {
		t.Fatal(err)
	}
	const trap = "symbolic link"
	for _, format := range [][]string{nil, {"--json"}} {
		args := append([]string{"queuectl", "--home", h.dir, "dlq", "list"}, format...)

		// Read to the end: the rows before the last job come out, and
		// then the error.
		var stdout, stderr bytes.Buffer
		if code := Main(t.Context(), args, nil, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), trap) {
			t.Fatalf("%v: exit %d, stderr %q; want 1 and the log refused", args[3:], code, &stderr)
		}
		if !strings.Contains(stdout.String(), ids[0]) {
			t.Errorf("%v: the first dead job not written before the error:\n%.500s", args[3:], &stdout)
		}

		// A writer that fails at once, as a closed pipe does: the error
		// is the write's, and the last job was never reached.
		stderr.Reset()
		code := Main(t.Context(), args, nil, brokenPipe{}, &stderr)
		if code != 1 || strings.Contains(stderr.String(), trap) || !strings.Contains(stderr.String(), syscall.EPIPE.Error()) {
			t.Errorf("%v to a broken pipe: exit %d, stderr %q; want 1 and the pipe's error alone", args[3:], code, &stderr)
		}

		// The real program into a pipe closed after the first line:
		// ended by SIGPIPE, as `queuectl list | head` is, with nothing
		// said of the last job.
		cmd := h.command(append([]string{"dlq", "list"}, format...)...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			t.Errorf("%v: first line: %v", args[3:], err)
		}
		out.Close()
		if code := shellCode(cmd.Wait()); code != 128+int(syscall.SIGPIPE) || errb.Len() > 0 {
			t.Errorf("%v | head -1: exit %d, stderr %q; want %d (SIGPIPE) and nothing", args[3:], code, &errb, 128+int(syscall.SIGPIPE))
		}
	}
}

// brokenPipe fails every write as a pipe without a reader does.
type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }

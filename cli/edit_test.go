package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/internal/testenv"
)

// editor writes an $EDITOR for edit: a script that copies the buffer it
// is given to seen, then runs change (sh, the buffer's path in $1).
func editor(t *testing.T, change string) (cmd, seen string) {
	t.Helper()
	dir := t.TempDir()
	seen = filepath.Join(dir, "seen.json")
	cmd = filepath.Join(dir, "editor")
	script := "#!/bin/sh\ncp \"$1\" '" + seen + "'\n" + change + "\n"
	if err := os.WriteFile(cmd, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return cmd, seen
}

// editOnTerminal runs queuectl edit args with stdin and stdout on a
// terminal, and $EDITOR set to ed; it returns stderr and the exit code.
func (h *qhome) editOnTerminal(ed string, args ...string) (stderr string, code int) {
	h.t.Helper()
	_, stderr, code = h.editOnTerminalOut(ed, args...)
	return stderr, code
}

// editOnTerminalOut is editOnTerminal that also returns what the terminal
// showed.
func (h *qhome) editOnTerminalOut(ed string, args ...string) (terminal, stderr string, code int) {
	h.t.Helper()
	master, tty := testenv.OpenPTY(h.t)
	defer master.Close()
	cmd := h.command(append([]string{"edit"}, args...)...)
	cmd.Env = append(cmd.Env, "EDITOR="+ed, "VISUAL=")
	cmd.Stdin, cmd.Stdout = tty, tty
	p := h.startCmd(cmd)
	tty.Close()
	var out bytes.Buffer
	read := make(chan struct{})
	go func() { io.Copy(&out, master); close(read) }() // ends once no one holds the tty
	code = p.exit(h.t, runLimit)
	select {
	case <-read:
	case <-time.After(runLimit):
		h.t.Fatalf("the terminal of queuectl edit %v still open after %v", args, runLimit)
	}
	return out.String(), p.stderr.String(), code
}

func (h *qhome) showEnv(id string) string {
	h.t.Helper()
	return h.must("show", "--json", "--env", id)
}

// TestEditWithoutATerminalRefuses: edit without change flags needs a
// terminal for the editor; on a pipe it exits 2 at once, naming the flags,
// and no editor starts.
func TestEditWithoutATerminalRefuses(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "j", "--command", "echo hi")
	ed, seen := editor(t, "")
	for _, args := range [][]string{{"edit", "j"}, {"edit", "j", "--json"}} {
		cmd := h.command(args...)
		cmd.Env = append(cmd.Env, "EDITOR="+ed, "VISUAL=")
		var out, errb bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, &errb
		err := cmd.Run()
		if code := shellCode(err); code != 2 {
			t.Errorf("queuectl %s on a pipe: exit %d, want 2\n%s", strings.Join(args, " "), code, errb.String())
		}
		for _, want := range []string{"not a terminal", "--priority", "--command", "--file"} {
			if !strings.Contains(errb.String(), want) {
				t.Errorf("queuectl %s on a pipe: stderr %q does not say %q", strings.Join(args, " "), errb.String(), want)
			}
		}
		if _, err := os.Stat(seen); err == nil {
			t.Fatalf("queuectl %s on a pipe started the editor", strings.Join(args, " "))
		}
	}
}

// TestEditKeepsAnEditThatDoesNotParse: a saved buffer that does not parse
// is an error in the field's terms, and the buffer is kept where the error
// says, to give back with --file once fixed.
func TestEditKeepsAnEditThatDoesNotParse(t *testing.T) {
	h := newHome(t)
	t.Setenv("TMPDIR", t.TempDir()) // the kept edits are the test's, not /tmp's
	h.must("enqueue", "--id", "j", "--command", "echo hi")
	for _, tc := range []struct{ change, want string }{
		{`sed -i 's/"priority": 0/"priority": "x"/' "$1"`, `priority must be a whole number`},
		{`sed -i 's/"queue": "default"/"queue": ""/' "$1"`, `queue`},
		{`sed -i 's/"priority": 0,/"priority": 0, "colour": 1,/' "$1"`, `unknown field "colour"`},
		{`sed -i 's/"priority": 0,/"priority": 0/' "$1"`, `line 4`}, // where the comma is missing
	} {
		ed, _ := editor(t, "sed -i 's/echo hi/echo bye/' \"$1\"\n"+tc.change)
		errText, code := h.editOnTerminal(ed, "j")
		if code != 2 || !strings.Contains(errText, tc.want) || strings.Contains(errText, "json:") || strings.Contains(errText, "Go ") {
			t.Errorf("edit saving (%s): exit %d, stderr:\n%s\nwant exit 2 and %q, no Go internals", tc.change, code, errText, tc.want)
		}
		m := regexp.MustCompile(`queuectl edit j --file (\S+)`).FindStringSubmatch(errText)
		if m == nil {
			t.Fatalf("edit: stderr names no kept file to give back:\n%s", errText)
		}
		kept, err := os.ReadFile(m[1])
		if err != nil || !strings.Contains(string(kept), "echo bye") {
			t.Fatalf("edit: the kept file %s has %q (%v), want the edited text", m[1], kept, err)
		}
		if strings.Contains(h.showEnv("j"), "echo bye") {
			t.Fatalf("edit applied a buffer that does not parse")
		}
	}
	// Fixed, the kept file is given back with --file, on a pipe too.
	ed, _ := editor(t, `sed -i 's/echo hi/echo bye/; s/"priority": 0/"priority": "x"/' "$1"`)
	errText, _ := h.editOnTerminal(ed, "j")
	file := regexp.MustCompile(`--file (\S+)`).FindStringSubmatch(errText)[1]
	data, _ := os.ReadFile(file)
	os.WriteFile(file, bytes.Replace(data, []byte(`"x"`), []byte("5"), 1), 0o600)
	if out := h.must("edit", "j", "--file", file); out != "Edited job j\n" {
		t.Errorf("edit --file printed %q", out)
	}
	if got := h.showEnv("j"); !strings.Contains(got, `"command": "echo bye"`) || !strings.Contains(got, `"priority": 5`) {
		t.Errorf("after edit --file, the job is\n%s", got)
	}
	if _, _, code := h.run("edit", "j", "--file", file, "--priority", "1"); code != 2 {
		t.Errorf("edit --file with a change flag: exit %d, want 2", code)
	}
	// A key given twice is refused, as enqueue refuses it: encoding/json
	// kept the last, which the reader of the first does not expect.
	for _, dup := range []string{`{"priority": 1, "priority": 2}`, `{"env": {"K": "a", "K": "x"}}`} {
		if err := os.WriteFile(file, []byte(dup), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, stderr, code := h.run("edit", "j", "--file", file); code != 2 || !strings.Contains(stderr, "duplicate key") {
			t.Errorf("edit --file of %s: exit %d, stderr %q; want 2 and the duplicate key said", dup, code, stderr)
		}
	}
	if got := h.showEnv("j"); !strings.Contains(got, `"priority": 5`) || strings.Contains(got, `"K"`) {
		t.Errorf("after the refused edits, the job is\n%s", got)
	}
	// Every field left out: nothing changes, and edit says so, as it does
	// of an editor's buffer saved as it was.
	os.WriteFile(file, []byte("{}"), 0o600)
	if out := h.must("edit", "j", "--file", file); out != "Job j unchanged\n" {
		t.Errorf("edit --file of {} printed %q, want the job unchanged", out)
	}
}

// TestEditHidesTheEnvironment: the editor's buffer has no env values
// unless --with-env asks for them (SPEC §6), and a buffer without env
// keeps the job's.
func TestEditHidesTheEnvironment(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "j", "--env", "MY_TOKEN=s3cr3t", "--command", "echo hi")
	ed, seen := editor(t, `sed -i 's/echo hi/echo bye/' "$1"`)
	if errText, code := h.editOnTerminal(ed, "j"); code != 0 {
		t.Fatalf("edit: exit %d\n%s", code, errText)
	}
	buf, _ := os.ReadFile(seen)
	if bytes.Contains(buf, []byte("s3cr3t")) || bytes.Contains(buf, []byte(`"env"`)) {
		t.Errorf("edit's buffer shows the environment:\n%s", buf)
	}
	if got := h.showEnv("j"); !strings.Contains(got, `"command": "echo bye"`) || !strings.Contains(got, `"MY_TOKEN": "s3cr3t"`) {
		t.Errorf("after edit, the job is\n%s\nwant the new command and the env kept", got)
	}
	ed, seen = editor(t, `sed -i 's/s3cr3t/n3w/' "$1"`)
	if errText, code := h.editOnTerminal(ed, "j", "--with-env"); code != 0 {
		t.Fatalf("edit --with-env: exit %d\n%s", code, errText)
	}
	if buf, _ := os.ReadFile(seen); !bytes.Contains(buf, []byte(`"MY_TOKEN": "s3cr3t"`)) {
		t.Errorf("edit --with-env's buffer has no env values:\n%s", buf)
	}
	if got := h.showEnv("j"); !strings.Contains(got, `"MY_TOKEN": "n3w"`) {
		t.Errorf("after edit --with-env, the job is\n%s", got)
	}
}

// TestEditOnATerminal: a buffer saved as it was changes nothing and edit
// says so; a job that ran is refused before the editor opens.
func TestEditOnATerminal(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "j", "--command", "echo hi")
	ed, seen := editor(t, "")
	terminal, errText, code := h.editOnTerminalOut(ed, "j")
	if code != 0 || !strings.Contains(terminal, "Job j unchanged") {
		t.Errorf("edit saving the buffer as it was: exit %d, terminal %q, stderr %q", code, terminal, errText)
	}
	os.Remove(seen)
	h.must("worker", "start", "--drain", "--no-spool")
	if errText, code := h.editOnTerminal(ed, "j"); code != 4 || !strings.Contains(errText, "job j is completed") {
		t.Errorf("edit of a completed job: exit %d, stderr %q, want 4", code, errText)
	}
	if _, err := os.Stat(seen); err == nil {
		t.Errorf("edit of a completed job opened the editor")
	}
}

// TestEditWhenTheEditorFails: an editor that exits non-zero changes
// nothing; the error says the editor failed and the hint names the job,
// not a placeholder.
func TestEditWhenTheEditorFails(t *testing.T) {
	h := newHome(t)
	t.Setenv("TMPDIR", t.TempDir())
	h.must("enqueue", "--id", "j", "--command", "echo hi")
	ed, _ := editor(t, "sed -i 's/echo hi/echo bye/' \"$1\"\nexit 3")
	errText, code := h.editOnTerminal(ed, "j")
	if code != 1 || !strings.Contains(errText, "failed (exit status 3); job j unchanged") ||
		!strings.Contains(errText, "queuectl edit j --priority") || strings.Contains(errText, " ID ") {
		t.Errorf("edit with an editor that exits 3: exit %d, stderr:\n%s\nwant exit 1, the editor said to have failed, job j named in the hint", code, errText)
	}
	if strings.Contains(h.showEnv("j"), "echo bye") {
		t.Errorf("edit applied what an editor that failed saved")
	}
	if left, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "queuectl-edit-*")); len(left) > 0 {
		t.Errorf("edit with an editor that failed left %v", left)
	}
}

// TestEditSavedEmptyAborts: a buffer saved empty is the usual way to abort
// an edit: the job is unchanged, edit exits 0 saying so, and leaves no
// copy of the buffer behind.
func TestEditSavedEmptyAborts(t *testing.T) {
	h := newHome(t)
	t.Setenv("TMPDIR", t.TempDir())
	h.must("enqueue", "--id", "j", "--command", "echo hi")
	ed, _ := editor(t, `printf '\n' > "$1"`)
	terminal, errText, code := h.editOnTerminalOut(ed, "j")
	if code != 0 || !strings.Contains(terminal, "Job j unchanged") || !strings.Contains(errText, "edit aborted") {
		t.Errorf("edit saving an empty buffer: exit %d, terminal %q, stderr %q; want exit 0, the edit said aborted, job j unchanged", code, terminal, errText)
	}
	if !strings.Contains(h.showEnv("j"), `"command": "echo hi"`) {
		t.Errorf("edit saving an empty buffer changed the job:\n%s", h.showEnv("j"))
	}
	if left, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "queuectl-edit-*")); len(left) > 0 {
		t.Errorf("edit saving an empty buffer left %v", left)
	}
}

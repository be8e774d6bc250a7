package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// completers drive each shell's real completion of a command line (the
// line is $2, the script $1) and print the candidates, one a line.
var completers = map[string][]string{
	// COMP_WORDS and COMP_CWORD as bash sets them: "=" (in COMP_WORDBREAKS)
	// is a word of its own, --state=d three words, --state= two.
	"bash": {"--norc", "--noprofile", "-c", `source "$1"; read -ra w <<<"$2"; [[ $2 == *" " ]] && w+=("")
COMP_WORDS=(); for x in "${w[@]}"; do
  while [[ $x == *=* ]]; do [[ -n ${x%%=*} ]] && COMP_WORDS+=("${x%%=*}"); COMP_WORDS+=("="); x=${x#*=}; done
  [[ -n $x || ${COMP_WORDS[-1]-} != "=" ]] && COMP_WORDS+=("$x")
done
COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _queuectl; printf '%s\n' "${COMPREPLY[@]}"`},
	// As zsh's bashcompinit sets them; zsh then filters by the prefix itself.
	"zsh": {"-f", "-c", `autoload -U +X compinit bashcompinit && compinit -u && bashcompinit; source "$1"
words=(${=2}); [[ $2 == *" " ]] && words+=(""); COMP_WORDS=("${words[@]}"); COMP_CWORD=$((${#words} - 1))
compgen -F _queuectl -- "${words[-1]}"`},
	// fish's own completion of a command line: candidate, tab, description.
	"fish": {"--no-config", "-c", `source $argv[1]; complete -C $argv[2] | string replace -r '\t.*' ''; true`},
}

// completionScript writes `queuectl completion SHELL` to a file.
func completionScript(t *testing.T, h *qhome, shell string) string {
	t.Helper()
	text := h.must("completion", shell)
	if shell == "zsh" {
		text = strings.TrimPrefix(text, "autoload -U +X compinit bashcompinit && compinit && bashcompinit\n")
	}
	path := filepath.Join(t.TempDir(), "queuectl."+shell)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// needShell returns the path of shell; without it the test is skipped,
// and fails under CI=true (.ci/run installs every shell).
func needShell(t *testing.T, shell string) string {
	t.Helper()
	sh, err := exec.LookPath(shell)
	if err == nil {
		return sh
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed, and CI=true: completion must be tried in it (apt-get install %s)", shell, shell)
	}
	t.Skipf("%s is not installed: completion not tried in it", shell)
	return ""
}

// completeLine completes line in shell with script, in dir, and returns the
// candidates. A completion that does not end within a minute (one that
// waits on a job, say) fails the test.
func completeLine(t *testing.T, h *qhome, shell, script, dir, line string) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args := append(append([]string{}, completers[shell]...), shell, script, line)
	if shell == "fish" {
		args = append(args[:len(args)-3], script, line)
	}
	cmd := exec.CommandContext(ctx, needShell(t, shell), args...)
	cmd.Env = append(os.Environ(), "QUEUECTL_HOME="+h.dir)
	cmd.Dir = dir
	// A queuectl the completion started is stopped with the shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: complete %q: %v (context: %v)\n%s", shell, line, err, ctx.Err(), out.String())
	}
	got := map[string]bool{}
	for _, w := range strings.Split(out.String(), "\n") {
		if w = strings.TrimSpace(w); w != "" {
			got[w] = true
		}
	}
	return got
}

// TestCompletionNeverRuns completes, in bash, zsh and fish through the
// scripts `queuectl completion` prints, command lines whose commands would
// store, change or wait for something if they ran: `run -- CMD` above all,
// where `--` used to make the completion request the command to run. The
// store and the home stay as they were, and no completion blocks.
func TestCompletionNeverRuns(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "kept", "--command", "true")
	state := func() string { return h.must("list", "--json") + h.must("queue", "list", "--json") }
	before := state()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			script := completionScript(t, h, shell)
			for _, tt := range []struct{ line, want string }{
				{"queuectl run --", "--shell"},
				{"queuectl run -- ", ""},
				{"queuectl run -- ech", "echo"},
				{"queuectl run -- sleep ", ""},
				{"queuectl run -- cat no", "notes.txt"},
				{"queuectl run ech", "echo"},
				{"queuectl run -q cat no", "notes.txt"},
				{"queuectl run --queue x -- sh -c 'exit 3' --", ""},
				{"queuectl enqueue --", "--command"},
				{"queuectl enqueue --command true ", ""},
				{"queuectl enqueue -- ", ""},
				{"queuectl cancel --queue default ", ""},
				{"queuectl rm kept ", ""},
				{"queuectl purge --state completed --older-than 0 ", ""},
				{"queuectl worker start ", ""},
				{"queuectl wait kept -", "--timeout"},
				{"queuectl pause ", ""},
				{"queuectl config set lease ", ""},
			} {
				got := completeLine(t, h, shell, script, dir, tt.line)
				if tt.want != "" && !got[tt.want] {
					t.Errorf("%s: complete %q = %v, want %s among them", shell, tt.line, got, tt.want)
				}
			}
			if after := state(); after != before {
				t.Errorf("%s: completion changed the store:\nbefore %s\nafter  %s", shell, before, after)
			}
		})
	}
	// Scripts of older releases ask with a trailing --generate-bash-completion:
	// candidates, and nothing run. After "--" it may instead be a command's
	// own last word: the call fails (exit 2), saying that nothing ran and
	// how to run such a command, rather than seem to have run it.
	if out := h.must("run", "--generate-bash-completion"); !strings.Contains(out, ":commands") {
		t.Errorf("run --generate-bash-completion printed %q, want the :commands directive", out)
	}
	for _, args := range [][]string{
		{"run", "--", "--generate-bash-completion"},
		{"run", "-q", "--", "echo", "--generate-bash-completion"},
		{"enqueue", "--", "--generate-bash-completion"},
	} {
		out, errText, code := h.run(args...)
		if code != exitUsage || out == "" || !strings.Contains(errText, "nothing was run") || !strings.Contains(errText, "--shell") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, the candidates, and a hint to --shell", args, code, out, errText, exitUsage)
		}
	}
	if after := state(); after != before {
		t.Errorf("an old script's completion changed the store:\nbefore %s\nafter  %s", before, after)
	}
}

// TestCompletionCreatesNoHome completes job ids for a home that does not
// exist: it is not created, nor is its store.
func TestCompletionCreatesNoHome(t *testing.T) {
	h := newHome(t)
	script := completionScript(t, newHome(t), "bash")
	if got := completeLine(t, h, "bash", script, t.TempDir(), "queuectl show "); len(got) != 0 {
		t.Errorf("complete %q = %v, want nothing", "queuectl show ", got)
	}
	if _, err := os.Stat(h.dir); !os.IsNotExist(err) {
		t.Errorf("completion created the home %s (stat: %v)", h.dir, err)
	}
}

// TestCompleteRunsCommandWords: after run's command word, what is typed is
// the command's (reorderArgs): files, never run's flags or values.
// TestCompletionInlineFlagValues: a flag's value typed after "=" is
// completed as after a space, in bash (which makes "=" a word of its own),
// zsh and fish (which keep --flag=value one word), and --home=DIR names the
// home to read as --home DIR does. Bash offered command names for
// run --queue=ma (make, man), nothing for list --state=d, and read the
// default home after --home=DIR.
func TestCompletionInlineFlagValues(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "hello", "--command", "true")
	other := newHome(t)
	other.must("enqueue", "--id", "nightly-db", "--queue", "mail", "--command", "true")
	tests := []struct{ line, flag, want string }{
		{"queuectl list --state=d", "--state=", "dead"},
		{"queuectl list --state=", "--state=", "pending failed dead"},
		{"queuectl list --reason=", "--reason=", "runnable scheduled waiting paused limited"},
		{"queuectl list --reason=li", "--reason=", "limited"},
		{"queuectl run --queue=ma", "--queue=", ""},
		{"queuectl --home=" + other.dir + " run --queue=ma", "--queue=", "mail"},
		{"queuectl --home=" + other.dir + " pause --queue ", "", "mail default"},
		{"queuectl --home=" + other.dir + " show ", "", "nightly-db"},
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script := completionScript(t, h, shell)
		for _, tt := range tests {
			got := completeLine(t, h, shell, script, t.TempDir(), tt.line)
			prefix := tt.flag
			if shell == "bash" {
				prefix = "" // bash completes the word after "=" alone
			}
			for _, w := range strings.Fields(tt.want) {
				if !got[prefix+w] {
					t.Errorf("%s: complete %q = %v, want %s among them", shell, tt.line, got, prefix+w)
				}
			}
			if shell == "zsh" { // zsh keeps those the typed word starts
				last := tt.line[strings.LastIndexByte(tt.line, ' ')+1:]
				for w := range got {
					if !strings.HasPrefix(w, last) {
						delete(got, w)
					}
				}
			}
			if tt.want == "" && len(got) > 0 {
				t.Errorf("%s: complete %q = %v, want nothing: no queue of this home starts so", shell, tt.line, got)
			}
		}
	}
}

// TestCompletionAfterTakesJobIDs: the value of --after (enqueue, run,
// edit) is a job id, and is completed as one, in bash, zsh and fish; it
// was completed as a path.
func TestCompletionAfterTakesJobIDs(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "fetch-1", "--command", "true")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fetch.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script := completionScript(t, h, shell)
		for _, line := range []string{"queuectl run --after fe", "queuectl enqueue --command true --after fe"} {
			if got := completeLine(t, h, shell, script, dir, line); !got["fetch-1"] || got["fetch.txt"] {
				t.Errorf("%s: complete %q = %v, want job fetch-1, not file fetch.txt", shell, line, got)
			}
		}
	}
}

func TestCompleteRunsCommandWords(t *testing.T) {
	app := newApp(context.Background())
	for _, words := range [][]string{{"run", "grep", "-"}, {"run", "-q", "grep", "--queue", ""}, {"run", "cat", "no"}} {
		var b strings.Builder
		complete(context.Background(), app, words, &b)
		if got := b.String(); got != ":files\n" {
			t.Errorf("complete %q = %q, want the :files directive alone", words, got)
		}
	}
	for _, words := range [][]string{{"run", ""}, {"run", "-q", "gr"}} {
		var b strings.Builder
		complete(context.Background(), app, words, &b)
		if got := b.String(); got != ":commands\n" {
			t.Errorf("complete %q = %q, want the :commands directive: run's first word is a command", words, got)
		}
	}
	var b strings.Builder
	complete(context.Background(), app, []string{"run", "-"}, &b)
	if !strings.Contains(b.String(), "--retries") {
		t.Errorf("complete run - = %q, want run's flags", b.String())
	}
}

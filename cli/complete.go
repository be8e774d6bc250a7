package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/queuectl/queuectl/claim"
	"github.com/urfave/cli/v2"
)

// Completion runs no command. The shell scripts call the hidden entry point
// `queuectl __complete WORD... CUR` (CUR the word being completed, maybe
// empty), and Main answers it before the command line reaches any
// command: nothing typed, not even `run -- CMD`, can store, change or wait
// for anything. urfave/cli's own protocol (the words plus a trailing
// --generate-bash-completion, which scripts of older releases send) is
// answered the same way; urfave/cli's would run the command after `--`.
//
// The answer is one candidate a line, or one directive: ":commands" (let
// the shell complete a command name) or ":files" (let it complete a path),
// which the scripts turn into the shell's own completion.
const (
	completeEntry  = "__complete"
	urfaveComplete = "--generate-bash-completion"
)

// completionWords returns the words a completion request of args asks for,
// the last the word being completed, and whether args is one at all.
func completionWords(args []string) ([]string, bool) {
	switch n := len(args); {
	case n > 1 && args[1] == completeEntry:
		return args[2:], true
	case n > 1 && args[n-1] == urfaveComplete:
		words := slices.Clone(args[1 : n-1])
		if len(words) == 0 || !strings.HasPrefix(words[len(words)-1], "-") {
			words = append(words, "")
		}
		return words, true
	}
	return nil, false
}

// legacyAfterDashes is the exit of a completion request: 0, but for one
// in urfave/cli's protocol whose --generate-bash-completion follows "--".
// That may be a command's own last word (`run -- tool
// --generate-bash-completion`), which completion must not run: the
// candidates are printed as for any request, and the call fails, saying
// how to run such a command, rather than seem to have run it. A script
// that completes with it ignores the exit.
func legacyAfterDashes(args []string, stderr io.Writer) int {
	if len(args) < 2 || args[1] == completeEntry || !slices.Contains(args[1:len(args)-1], "--") {
		return exitOK
	}
	fmt.Fprintf(stderr, "queuectl: error: %s as the last word is a completion request: nothing was run\n", urfaveComplete)
	fmt.Fprintf(stderr, "queuectl: hint: to run a command that ends in it: queuectl run --shell 'CMD %s'\n", urfaveComplete)
	return exitUsage
}

// completion is where a command line being completed stands.
type completion struct {
	app      *cli.App
	cmd      *cli.Command // nil: at the app's level
	flags    []cli.Flag   // the level's flags
	nargs    int          // positional arguments typed at the level
	dashdash int          // words typed after "--"; -1: no "--"
	prev     string       // the word before the one completed
	home, db string
}

// complete writes the candidates for the last of words to w. It reads the
// store (read-only, never creating it) for job ids and queues, and nothing
// else.
func complete(ctx context.Context, app *cli.App, words []string, w io.Writer) {
	if len(words) == 0 {
		words = []string{""}
	}
	words, split := joinInline(words)
	cur := words[len(words)-1]
	s := walk(app, words[:len(words)-1])
	if s.dashdash >= 0 {
		switch {
		case s.cmd != nil && s.cmd.Name == "run" && s.dashdash == 0:
			fmt.Fprintln(w, ":commands")
		case s.cmd != nil && s.cmd.Name == "run":
			fmt.Fprintln(w, ":files")
		default:
			printLines(w, s.arguments(ctx))
		}
		return
	}
	if takes, known := flagSpec(s.flags)[flagOf(s.prev)]; known && takes {
		printLines(w, s.flagValues(ctx, flagOf(s.prev)))
		return
	}
	if name, inline := flagName(cur); isFlag(cur) && inline {
		if takes, known := flagSpec(s.flags)[name]; known && takes || flagSpec(app.Flags)[name] {
			printLines(w, inlineValues(cur, split, s.flagValues(ctx, name)))
		}
		return
	}
	if strings.HasPrefix(cur, "-") {
		printLines(w, flagWords(s.flags))
		return
	}
	printLines(w, s.arguments(ctx))
}

// joinInline joins each --flag, "=" and value that bash made three words
// of ("=" is in its COMP_WORDBREAKS) back into --flag=value, and reports
// whether the last word was so split: bash then completes only the value
// (the word after "=", or "=" itself when nothing follows yet). zsh and
// fish pass --flag=value as one word.
func joinInline(words []string) ([]string, bool) {
	var out []string
	split := false
	for i := 0; i < len(words); i++ {
		word := words[i]
		split = word == "=" && len(out) > 0 && flagOf(out[len(out)-1]) != ""
		if split {
			word = out[len(out)-1] + "="
			out = out[:len(out)-1]
			if i+1 < len(words) {
				i++
				word += words[i]
			}
		}
		out = append(out, word)
	}
	return out, split
}

// inlineValues are the candidates for the value of --flag=value, cur: the
// values alone where the shell completes the value alone (split), else
// each after --flag=, as zsh and fish match them against the whole word.
// A directive stays as it is.
func inlineValues(cur string, split bool, values []string) []string {
	if split || slices.ContainsFunc(values, func(v string) bool { return strings.HasPrefix(v, ":") }) {
		return values
	}
	flag, _, _ := strings.Cut(cur, "=")
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = flag + "=" + v
	}
	return out
}

// walk follows words from the app through the commands they name.
func walk(app *cli.App, words []string) *completion {
	s := &completion{app: app, flags: app.Flags, dashdash: -1}
	global := flagSpec(app.Flags)
	for i := 0; i < len(words); i++ {
		word := words[i]
		s.prev = word
		switch {
		case s.dashdash >= 0:
			s.dashdash++
		case word == "--":
			s.dashdash = 0
		case isFlag(word):
			name, inline := flagName(word)
			takes, known := flagSpec(s.flags)[name]
			if !known {
				takes = global[name]
			}
			if _, value, ok := strings.Cut(word, "="); inline && ok {
				s.setGlobal(name, value)
			}
			if takes && !inline && i+1 < len(words) {
				i++
				s.prev = words[i]
				s.setGlobal(name, words[i])
			}
		case s.nargs == 0 && s.command(word) != nil:
			s.cmd = s.command(word)
			s.flags = s.cmd.Flags
		case s.cmd != nil && s.cmd.Name == "run":
			// The command's first word ends run's flags (reorderArgs):
			// what follows is the command's, as after "--".
			s.dashdash = 1
		default:
			s.nargs++
		}
	}
	return s
}

func (s *completion) setGlobal(name, value string) {
	switch name {
	case "home":
		s.home = value
	case "db":
		s.db = value
	}
}

// command returns the command called name at the level, or nil.
func (s *completion) command(name string) *cli.Command {
	if s.cmd == nil {
		for _, c := range s.app.Commands {
			if c.HasName(name) {
				return c
			}
		}
		return nil
	}
	return subcommand(s.cmd, name)
}

// flagOf is the name of word when it is a flag without an inline value.
func flagOf(word string) string {
	if name, inline := flagName(word); isFlag(word) && !inline {
		return name
	}
	return ""
}

// flagWords lists each visible flag as it is typed: --name, -n; and --help.
func flagWords(flags []cli.Flag) []string {
	words := []string{"--help"}
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		for _, n := range f.Names() {
			if len(n) == 1 {
				words = append(words, "-"+n)
			} else {
				words = append(words, "--"+n)
			}
		}
	}
	return words
}

// flagValues completes the value of flag name: states, pending reasons,
// and queues and the job ids --after takes from the store; a path for any
// other.
func (s *completion) flagValues(ctx context.Context, name string) []string {
	switch name {
	case "state":
		return stateNames()
	case "reason":
		return append([]string{claim.ReasonRunnable}, claim.PendingReasons...)
	case "queue":
		return s.queues(ctx)
	case "after":
		return s.ids(ctx)
	}
	return []string{":files"}
}

// arguments completes a positional argument: subcommands, or what the
// command's ArgsUsage names: job ids (ID), config keys (KEY), shells.
func (s *completion) arguments(ctx context.Context) []string {
	if s.cmd == nil {
		return visibleNames(s.app.Commands)
	}
	switch {
	case len(s.cmd.Subcommands) > 0:
		return visibleNames(s.cmd.Subcommands)
	case strings.Contains(s.cmd.ArgsUsage, "ID"):
		return s.ids(ctx)
	case strings.Contains(s.cmd.ArgsUsage, "KEY") && s.nargs == 0:
		keys := make([]string, len(claim.ConfigKeys))
		for i, k := range claim.ConfigKeys {
			keys[i] = k.Name
		}
		return keys
	case s.cmd.Name == "completion":
		return []string{"bash", "zsh", "fish"}
	case s.cmd.Name == "run":
		return []string{":commands"} // its first word, which ends its flags (walk)
	case s.cmd.Name == "enqueue":
		return []string{":files"}
	}
	return nil
}

func visibleNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			names = append(names, c.Name)
		}
	}
	return names
}

func stateNames() []string {
	names := make([]string, len(claim.States))
	for i, st := range claim.States {
		names[i] = string(st)
	}
	return names
}

// completeLimit bounds the job ids offered: the newest first.
const completeLimit = 500

// store opens the home's store to read it only: a store that does not
// exist yet stays so.
func (s *completion) store() (*claim.Store, error) {
	_, db, err := homePathsOf(s.home, s.db)
	if err != nil {
		return nil, err
	}
	return claim.OpenReadOnly(db)
}

func (s *completion) ids(ctx context.Context) []string {
	st, err := s.store()
	if err != nil {
		return nil
	}
	defer st.Close()
	f := claim.Filter{Newest: true, Limit: completeLimit}
	if s.app.Command("dlq") != nil && slices.Contains(s.app.Command("dlq").Subcommands, s.cmd) {
		f.State = claim.Dead
	}
	jobs, err := st.List(ctx, f)
	if err != nil {
		return nil
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

func (s *completion) queues(ctx context.Context) []string {
	queues := []string{claim.DefaultQueue}
	st, err := s.store()
	if err != nil {
		return queues
	}
	defer st.Close()
	counts, err := st.QueueCounts(ctx)
	if err != nil {
		return queues
	}
	for q := range counts {
		if !slices.Contains(queues, q) {
			queues = append(queues, q)
		}
	}
	sort.Strings(queues)
	return queues
}

func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

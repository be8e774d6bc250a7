package cli

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/urfave/cli/v2"
)

// Flags anywhere. urfave/cli v2 stops reading a command's flags at its first
// positional argument, as Go's flag package does; people, scripts and every
// peer CLI put flags after arguments (`queuectl wait ID --timeout 5m`). So
// Main reorders the command line once, before the app parses it: at each
// level (the app, a command, a subcommand) that level's flags move in front
// of its positional arguments. Which flags take a value is read from the
// flag definitions, so `--command 'sh --x'` and `--limit -1` keep their
// values. `--` ends flags: what follows stays positional. `-` is an argument
// (stdin). The app's own flags (--home, --db) may also come after the
// command; they move in front of it. A command added to the app needs
// nothing more.

// reorderArgs returns args (args[0] is the program name) with every level's
// flags before its positional arguments. A command line being completed by
// the shell is left alone: urfave/cli reads its last word.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return args
	}
	global := flagSpec(app.Flags, "help", "h", "version", "v")
	var lead, lowered []string
	rest := args[1:]
	i, help := 0, false
	for ; i < len(rest) && rest[i] != "--" && isFlag(rest[i]); i++ {
		name, inline := flagName(rest[i])
		if name == "json" {
			lowered = append(lowered, rest[i]) // a command's flag (lowered)
			continue
		}
		help = help || name == "help" || name == "h"
		lead = append(lead, rest[i])
		if global[name] && !inline && i+1 < len(rest) {
			i++
			lead = append(lead, rest[i])
		}
	}
	if i == len(rest) {
		if help {
			// `queuectl --json --help`: the app's help, as a command's
			// --help ignores the --json lowered to it (reorderLevel).
			return append([]string{args[0]}, lead...)
		}
		return args
	}
	cmd := app.Command(rest[i])
	if rest[i] == "--" {
		return args // `queuectl --json -- status`: no command, as typed
	}
	if cmd == nil {
		// No such command: the app says so, not that it has no --json.
		return append(append([]string{args[0]}, lead...), rest[i:]...)
	}
	var hoisted []string
	tail, whole := reorderLevel(cmd, global, rest[i+1:], &hoisted, lowered)
	out := append([]string{args[0]}, lead...)
	out = append(out, hoisted...)
	if !whole {
		// The app's flag typed last without its value (`queuectl list
		// --db`): in front of the command it would take the command's
		// name for its value; alone, it says that it needs one.
		return out
	}
	out = append(out, rest[i])
	return append(out, tail...)
}

// reorderLevel reorders the arguments that follow cmd's name: cmd's flags
// first, then its positional arguments, or the subcommand they start with
// and that subcommand's arguments, reordered in turn. A flag cmd does not
// define but the app does goes to hoisted. lowered, given before the
// command (`queuectl --json status`: SPEC §5 counts --json among the
// global flags, for the commands whose output is data), goes to the
// command that is run, in front of its own flags; one that does not take
// it says so, as for any flag it lacks, unless it is asked for its help,
// which has no JSON form and drops it.
//
// A flag that takes a value typed last without one (`cancel ID --queue`)
// would take the first argument for its value once moved in front of
// them (cancel the jobs of a queue named ID): the arguments are dropped
// instead, so that the flag says it needs a value and nothing is run. For
// one of the app's, whole is false: the command goes too.
func reorderLevel(cmd *cli.Command, global map[string]bool, args []string, hoisted *[]string, lowered []string) (tail []string, whole bool) {
	own := flagSpec(cmd.Flags, "help", "h")
	var flags, pos []string
	ended, help := false, false
	whole = true
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos, ended = append(pos, args[i+1:]...), true
			break
		}
		if !isFlag(a) {
			if sub := subcommand(cmd, a); sub != nil && len(pos) == 0 {
				tail, whole := reorderLevel(sub, global, args[i+1:], hoisted, lowered)
				return append(append(flags, a), tail...), whole
			}
			if cmd.Name == "run" {
				// `run grep -q x f`: the command's first word ends run's
				// flags, as for env, nohup and sudo; what follows is the
				// command's, flags and all.
				pos, ended = append(pos, args[i:]...), true
				break
			}
			pos = append(pos, a)
			continue
		}
		name, inline := flagName(a)
		help = help || name == "help" || name == "h"
		dest := &flags
		takesValue, known := own[name]
		if !known {
			if takesValue, known = global[name]; known {
				dest = hoisted
			}
		}
		if cmd.Name == "enqueue" && len(pos) > 0 && !jsonWord(pos[0]) {
			// `enqueue rm -f x`: a command typed where the job's JSON goes,
			// with its own flags, which are not enqueue's (its -f would
			// read x as a job); enqueue says how to give a command.
			pos = append(pos, a)
			continue
		}
		*dest = append(*dest, a)
		if takesValue && !inline && i+1 == len(args) {
			pos, whole = nil, dest != hoisted
			break
		}
		if takesValue && !inline && i+1 < len(args) {
			i++
			*dest = append(*dest, args[i])
		}
	}
	if help {
		// urfave/cli would take an argument for a command to show help
		// on; help has no JSON form, so a lowered --json is dropped.
		return flags, whole
	}
	if len(cmd.Subcommands) == 0 {
		flags = append(slices.Clip(lowered), flags...)
	} // else no subcommand was named: the group says so, not that it has no --json
	if ended || anyFlagLike(pos) {
		flags = append(flags, "--")
	}
	return append(flags, pos...), whole
}

// queueOf returns the --queue a command selects its jobs by ("" when not
// given). One given but empty (`wait --queue "$Q"` with Q unset) names no
// queue: an error (ErrInvalid), as for cancel and pause, where the filter
// would take it for every queue.
func queueOf(c *cli.Context) (string, error) {
	q := c.String("queue")
	if c.IsSet("queue") && !claim.ValidID(q) {
		return "", fmt.Errorf("%w: queue %q is not valid: %s", claim.ErrInvalid, q, claim.NameRule)
	}
	return q, nil
}

// flagSpec maps every name of flags (and of the implicit bool flags given)
// to whether it takes a value.
func flagSpec(flags []cli.Flag, bools ...string) map[string]bool {
	spec := map[string]bool{}
	for _, b := range bools {
		spec[b] = false
	}
	for _, f := range flags {
		takes := true
		if d, ok := f.(cli.DocGenerationFlag); ok {
			takes = d.TakesValue()
		}
		for _, n := range f.Names() {
			spec[n] = takes
		}
	}
	return spec
}

func subcommand(cmd *cli.Command, name string) *cli.Command {
	for _, sub := range cmd.Subcommands {
		if sub.HasName(name) {
			return sub
		}
	}
	return nil
}

// isFlag tells a flag from an argument: "-" (stdin) and negative numbers are
// arguments.
func isFlag(a string) bool {
	return len(a) > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9')
}

func anyFlagLike(args []string) bool {
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' {
			return true
		}
	}
	return false
}

// flagName returns the name in "-n", "--name" or "--name=value", and
// whether the value is inline.
func flagName(a string) (name string, inline bool) {
	name = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	name, _, inline = strings.Cut(name, "=")
	return name, inline
}

// durationValue is a duration flag's value: Go syntax (90s, 10m, 168h) or
// whole seconds (SPEC §5), with a parse error that says what to write. Its
// String is the default shown by --help: none for zero.
type durationValue struct{ d time.Duration }

func (v *durationValue) Set(s string) error {
	d, err := claim.ParseDuration(s)
	if err != nil {
		return errors.New("write a duration such as 90s, 10m or 168h, or whole seconds")
	}
	v.d = d
	return nil
}

func (v *durationValue) String() string {
	if v.d == 0 {
		return ""
	}
	return v.d.String()
}

// durationFlag defines a duration flag; durationOf reads it.
func durationFlag(name string, value time.Duration, usage string) *cli.GenericFlag {
	return &cli.GenericFlag{Name: name, Value: &durationValue{value}, Usage: usage}
}

func durationOf(c *cli.Context, name string) time.Duration {
	if v, ok := c.Generic(name).(*durationValue); ok {
		return v.d
	}
	return 0
}

// flagValueError matches the flag package's error for a value it cannot
// parse; urfave/cli hands it on as text only. Compiled when first needed,
// not at every command's start.
var flagValueError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid value "(.*)" for flag -([^:]+): (.*)$`)
})

// explainFlagError rewrites a flag parse error to say what to write:
// `--priority "high": write a whole number, e.g. --priority 10`.
func explainFlagError(c *cli.Context, err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag needs an argument: -"); ok {
		// Go's flag package names the flag with one dash, as it takes it.
		if name = strings.TrimPrefix(name, "-"); len(name) > 1 {
			return fmt.Errorf("--%s needs a value", name)
		}
		return fmt.Errorf("-%s needs a value", name)
	}
	m := flagValueError().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	value, name, why := m[1], m[2], m[3]
	if why == "parse error" || strings.HasSuffix(why, "invalid syntax") || strings.HasSuffix(why, "value out of range") {
		why = "write a value of the right kind"
		for _, f := range commandFlags(c) {
			if slices.Contains(f.Names(), name) {
				name = f.Names()[0]
				why = whatToWrite(f, name)
			}
		}
	}
	return fmt.Errorf("--%s %q: %s", name, value, why)
}

// whatToWrite says what a flag of f's kind takes.
func whatToWrite(f cli.Flag, name string) string {
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return fmt.Sprintf("write a whole number, e.g. --%s 10", name)
	case *cli.Float64Flag:
		return fmt.Sprintf("write a number, e.g. --%s 1.5", name)
	case *cli.BoolFlag:
		return fmt.Sprintf("write --%s alone, or --%s=true or --%s=false", name, name, name)
	}
	return "write a value of the right kind"
}

// commandFlags are the flags of the running command, or the app's.
func commandFlags(c *cli.Context) []cli.Flag {
	if c.Command != nil && len(c.Command.Flags) > 0 {
		return c.Command.Flags
	}
	return c.App.Flags
}

// realDefault makes --help show a flag's real default, once: a bool's
// "(default: false)" says nothing, and a default that the usage text names
// ("(default: config max-retries)") replaces the zero value urfave/cli
// would print after it.
func realDefault(f cli.Flag) {
	var usage, text *string
	switch f := f.(type) {
	case *cli.BoolFlag:
		f.DisableDefaultText = true
		return
	case *cli.IntFlag:
		usage, text = &f.Usage, &f.DefaultText
	case *cli.StringFlag:
		usage, text = &f.Usage, &f.DefaultText
	case *cli.GenericFlag:
		usage, text = &f.Usage, &f.DefaultText
	case *cli.StringSliceFlag:
		usage, text = &f.Usage, &f.DefaultText
	default:
		return
	}
	if i := strings.Index(*usage, " (default: "); i >= 0 && strings.HasSuffix(*usage, ")") {
		*text = (*usage)[i+len(" (default: ") : len(*usage)-1]
		*usage = (*usage)[:i]
	}
}

// jsonWord reports whether an argument of enqueue is the job (JSON) or
// stdin, rather than a command typed in its place.
func jsonWord(a string) bool {
	a = strings.TrimSpace(a)
	return a == "" || a == "-" || a[0] == '{' || a[0] == '['
}

// repeatedFlag returns the error for a flag that selects what a command
// acts on (--state, --queue, --label of list, wait, cancel, restart, pause,
// resume, dlq purge) given twice with two values: urfave/cli keeps the last
// and drops the other without a word, so `list --state dead --state
// canceled` listed the canceled jobs only, and `pause --queue a --queue b`
// paused b alone. A setting given twice keeps its last value, the Unix way
// (an alias's default overridden: `ql --limit 50`). It walks args as
// reorderArgs does.
func repeatedFlag(app *cli.App, args []string) error {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return nil
	}
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if a == "--help" || a == "-h" {
			return nil // the help, whatever else was typed
		}
	}
	var cmd *cli.Command
	flags, seen, pos, path := app.Flags, map[string]string{}, 0, "queuectl"
	for i := 1; i < len(args) && args[i] != "--"; i++ {
		a := args[i]
		if !isFlag(a) {
			// A command, a subcommand, or an argument: flags after an
			// argument are still the command's (reorderArgs).
			var next *cli.Command
			switch {
			case cmd == nil:
				next = app.Command(a)
				if next == nil {
					return nil // no such command: the app says so
				}
			case pos == 0:
				next = subcommand(cmd, a)
			}
			if next != nil {
				cmd, flags, seen, path = next, next.Flags, map[string]string{}, path+" "+next.Name
				continue
			}
			if cmd.Name == "enqueue" && !jsonWord(a) {
				return nil // a command typed for enqueue: its flags are its own
			}
			pos++
			continue
		}
		name, value, inline := strings.TrimLeft(a, "-"), "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, value, inline = k, v, true
		}
		f := flagNamed(flags, name)
		if f == nil {
			f = flagNamed(app.Flags, name) // --home or --db after the command
		}
		if f == nil {
			continue
		}
		if takesValue(f) && !inline && i+1 < len(args) {
			i++
			value = args[i]
		}
		if cmd == nil || !selecting[cmd.Name] || !slices.Contains([]string{"state", "queue", "label", "reason"}, f.Names()[0]) {
			continue
		}
		if first, ok := seen[name]; ok && first != value {
			return withHint(usagef("--%s given twice (%q, then %q): it takes one", name, first, value),
				"run the command once for each; see: "+path+" --help")
		}
		seen[name] = value
	}
	return nil
}

// selecting are the commands whose --state, --queue, --label (and list's
// --reason) choose the jobs or queues they act on.
var selecting = map[string]bool{"list": true, "wait": true, "cancel": true, "restart": true, "pause": true,
	"resume": true, "purge": true}

func flagNamed(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	d, ok := f.(cli.DocGenerationFlag)
	return !ok || d.TakesValue()
}

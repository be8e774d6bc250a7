package cli

import (
	"strings"

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
	var lead []string
	rest := args[1:]
	i := 0
	for ; i < len(rest) && rest[i] != "--" && isFlag(rest[i]); i++ {
		lead = append(lead, rest[i])
		if name, inline := flagName(rest[i]); global[name] && !inline && i+1 < len(rest) {
			i++
			lead = append(lead, rest[i])
		}
	}
	if i == len(rest) {
		return args
	}
	cmd := app.Command(rest[i])
	if cmd == nil {
		return args
	}
	var hoisted []string
	tail := reorderLevel(cmd, global, rest[i+1:], &hoisted)
	out := append([]string{args[0]}, lead...)
	out = append(out, hoisted...)
	out = append(out, rest[i])
	return append(out, tail...)
}

// reorderLevel reorders the arguments that follow cmd's name: cmd's flags
// first, then its positional arguments, or the subcommand they start with
// and that subcommand's arguments, reordered in turn. A flag cmd does not
// define but the app does goes to hoisted.
func reorderLevel(cmd *cli.Command, global map[string]bool, args []string, hoisted *[]string) []string {
	own := flagSpec(cmd.Flags, "help", "h")
	var flags, pos []string
	ended, help := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos, ended = append(pos, args[i+1:]...), true
			break
		}
		if !isFlag(a) {
			if sub := subcommand(cmd, a); sub != nil && len(pos) == 0 {
				flags = append(flags, a)
				return append(flags, reorderLevel(sub, global, args[i+1:], hoisted)...)
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
		*dest = append(*dest, a)
		if takesValue && !inline && i+1 < len(args) {
			i++
			*dest = append(*dest, args[i])
		}
	}
	if help {
		return flags // urfave/cli would take an argument for a command to show help on
	}
	if ended || anyFlagLike(pos) {
		flags = append(flags, "--")
	}
	return append(flags, pos...)
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

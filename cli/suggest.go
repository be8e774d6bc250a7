package cli

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/queuectl/queuectl/internal/suggest"
	"github.com/urfave/cli/v2"
)

// A typo gets the nearest name (suggest.Nearest): of a command, a
// subcommand or a flag of the command typed. urfave/cli's own suggestion
// always names something, however far.

// commandNotFound is the app's CommandNotFound: a command (or a subcommand
// of c.Command) that does not exist is a usage error, with the nearest
// name when there is one.
func commandNotFound(code *int) func(*cli.Context, string) {
	return func(c *cli.Context, name string) {
		cmds, help := c.App.Commands, "queuectl --help"
		if c.Command != nil && len(c.Command.Subcommands) > 0 {
			cmds, help = c.Command.Subcommands, c.Command.HelpName+" --help"
		}
		var names []string
		for _, cmd := range cmds {
			if !cmd.Hidden {
				names = append(names, cmd.Names()...)
			}
		}
		hint := "see: " + help
		if near := suggest.Nearest(name, names); near != "" {
			hint = fmt.Sprintf("did you mean %s? (%s lists every command)", near, help)
		} else if top := c.App.Command(name); c.Command != nil && top != nil && !top.Hidden {
			// `queue pause heavy`: a command of the app's, not of the group's.
			hint = fmt.Sprintf("%s is a command of its own: see queuectl %s --help", name, name)
		}
		fmt.Fprintf(c.App.ErrWriter, "queuectl: error: no command %q\nqueuectl: hint: %s\n", name, hint)
		*code = exitUsage
	}
}

// undefinedFlag matches the flag package's error for a flag no one defines.
var undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)

// unknownFlag turns the flag package's "flag provided but not defined"
// into queuectl's words, with the nearest flag of the command (or a global
// one) when there is one; nil for any other error.
func unknownFlag(c *cli.Context, err error, help string) error {
	m := undefinedFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return nil
	}
	var names []string
	for _, f := range append(commandFlags(c), c.App.Flags...) {
		names = append(names, f.Names()...)
	}
	typed := "--" + m[1]
	if len(m[1]) == 1 {
		typed = "-" + m[1]
	}
	hint := "see: " + help
	if cmd, ok := strings.CutSuffix(help, " --help"); ok && m[1] == "json" && cmd != "queuectl" {
		// given before the command too, as for those that print data
		return withHint(usagef("%s has no --json form", cmd), hint)
	}
	if near := suggest.Nearest(m[1], names); near != "" {
		dashes := "--"
		if len(near) == 1 {
			dashes = "-"
		}
		hint = fmt.Sprintf("did you mean %s%s? (see: %s)", dashes, near, help)
	}
	return withHint(usagef("no flag %s", typed), hint)
}

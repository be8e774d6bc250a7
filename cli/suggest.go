package cli

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
)

// A typo gets the nearest name: of a command, a subcommand or a flag of the
// command typed. urfave/cli's own suggestion always names something, however
// far; nearest names only what is one or two edits away, or what the word
// typed starts.

// nearest returns the candidate closest to typed within a small edit
// distance (1 for short words, 2 from five letters on), or else one that
// typed starts; "" when none is that near. An empty word, which starts
// every candidate, is near none.
func nearest(typed string, candidates []string) string {
	if typed == "" {
		return ""
	}
	best, bestD := "", 3
	limit := 1
	if len(typed) >= 5 {
		limit = 2
	}
	for _, c := range candidates {
		// One letter is one edit from every other letter: it gets only
		// the words it starts.
		if d := editDistance(typed, c); len(typed) > 1 && d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	for _, c := range candidates {
		if len(c) > len(typed) && strings.HasPrefix(c, typed) {
			return c
		}
	}
	// A singular for a plural, three edits apart, alone or as the last
	// word: retry for retries or max-retries.
	if stem, ok := strings.CutSuffix(typed, "y"); ok && len(stem) >= 3 {
		for _, c := range candidates {
			if c == stem+"ies" || strings.HasSuffix(c, "-"+stem+"ies") {
				return c
			}
		}
	}
	return ""
}

// editDistance is the optimal string alignment distance of a and b: the
// insertions, deletions, substitutions and swaps of two neighbours that
// make one the other.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

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
		if near := nearest(name, names); near != "" {
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
	if near := nearest(m[1], names); near != "" {
		dashes := "--"
		if len(near) == 1 {
			dashes = "-"
		}
		hint = fmt.Sprintf("did you mean %s%s? (see: %s)", dashes, near, help)
	}
	return withHint(usagef("no flag %s", typed), hint)
}

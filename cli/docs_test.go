package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/spool"
	"github.com/urfave/cli/v2"
)

// The docs are README.md and docs/*.md. These tests keep them true to the
// CLI and to each other: every queuectl command line they show parses, and
// every relative link leads somewhere.

func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../README.md"}, files...)
}

// docCommandLines returns each queuectl command of a doc's fenced sh
// blocks, and of the `$ queuectl …` lines of its other fenced blocks, as
// the words after queuectl.
func docCommandLines(text string) [][]string {
	var out [][]string
	fence := regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```$")
	for _, m := range fence.FindAllStringSubmatch(text, -1) {
		body := m[2]
		if m[1] != "sh" {
			var prompts []string
			for _, line := range strings.Split(body, "\n") {
				if rest, ok := strings.CutPrefix(line, "$ "); ok {
					prompts = append(prompts, rest)
				}
			}
			body = strings.Join(prompts, "\n")
		}
		for _, words := range shellCommands(body) {
			for len(words) > 0 && (regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(words[0]) ||
				words[0] == "sudo" || words[0] == "time") {
				words = words[1:]
			}
			if len(words) > 0 && (words[0] == "queuectl" || strings.HasSuffix(words[0], "/queuectl")) {
				out = append(out, words[1:])
			}
		}
	}
	return out
}

// checkCommandLine says what in args (the words after queuectl) the app
// would refuse: a command or subcommand it does not have, or a flag that is
// neither the command's nor a global one.
func checkCommandLine(app *cli.App, args []string) error {
	var cmd *cli.Command
	subs := app.Commands
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
			f := findFlag(name, cmd, app)
			if f == nil {
				return fmt.Errorf("no flag %s", a)
			}
			if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() && !inline {
				i++
			}
			continue
		}
		if subs == nil {
			continue // an argument
		}
		next := findCommand(subs, a)
		switch {
		case next != nil:
			cmd, subs = next, next.Subcommands
		case cmd == nil:
			return fmt.Errorf("no command %q", a)
		default: // a group's words are its subcommands (groupAction)
			return fmt.Errorf("%s has no subcommand %q", cmd.Name, a)
		}
	}
	if cmd != nil && len(subs) > 0 {
		return fmt.Errorf("%s needs a subcommand", cmd.Name)
	}
	return nil
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// findFlag looks name up among cmd's flags (the app's when cmd is nil), the
// global flags, which queuectl takes after a command too, and help.
func findFlag(name string, cmd *cli.Command, app *cli.App) cli.Flag {
	flags := append([]cli.Flag{cli.HelpFlag}, app.Flags...)
	if cmd != nil {
		flags = append(flags, cmd.Flags...)
	} else {
		flags = append(flags, cli.VersionFlag)
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func TestDocsCommandLinesParse(t *testing.T) {
	app := newApp(context.Background())
	seen := 0
	for _, file := range docFiles(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range docCommandLines(string(text)) {
			seen++
			if err := checkCommandLine(app, args); err != nil {
				t.Errorf("%s shows `queuectl %s`: %v", file, strings.Join(args, " "), err)
			}
		}
	}
	if seen < 60 {
		t.Errorf("found %d queuectl command lines in the docs' sh blocks; want them all (60 or more)", seen)
	}
}

// TestDocsJSONIsValid: every json block of the docs is JSON, and those of
// the job spec's page are specs that queuectl accepts.
func TestDocsJSONIsValid(t *testing.T) {
	fence := regexp.MustCompile("(?ms)^```json\n(.*?)^```$")
	blocks := 0
	for _, file := range docFiles(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllStringSubmatch(string(text), -1) {
			blocks++
			if !json.Valid([]byte(m[1])) {
				t.Errorf("%s: a json block is not JSON:\n%s", file, m[1])
			}
			if filepath.Base(file) == "job-spec.md" {
				if _, err := spool.Parse("example.json", []byte(m[1])); err != nil {
					t.Errorf("%s: its example spec is refused: %v", file, err)
				}
			}
		}
	}
	if blocks == 0 {
		t.Error("found no json block in the docs")
	}
}

func TestCheckCommandLine(t *testing.T) {
	app := newApp(context.Background())
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{`queuectl enqueue -q --command 'echo hi' --timeout 30m`, true},
		{`queuectl --home /tmp/h dlq retry "$id" --json`, true},
		{`queuectl logs "$id" --all --stderr`, true},
		{`queuectl run --queue heavy -- xz --no-such-flag`, true},
		{`queuectl enqueue -`, true},
		{`queuectl enqeue --command true`, false},
		{`queuectl list --stat dead`, false},
		{`queuectl dlq retyr @last`, false},
		{`queuectl dlq`, false},
		{`queuectl worker start --timeout 5m`, false},
		{`id=$(queuectl enqueue -q --bogus x)`, false},
		{`echo x | queuectl enqueue -f - && queuectl wait @last --nope`, false},
	} {
		t.Run(tc.line, func(t *testing.T) {
			lines := docCommandLines("```sh\n" + tc.line + "\n```\n")
			if len(lines) == 0 {
				t.Fatalf("%s: no queuectl command found", tc.line)
			}
			var err error
			for _, args := range lines {
				if err == nil {
					err = checkCommandLine(app, args)
				}
			}
			if (err == nil) != tc.ok {
				t.Errorf("checkCommandLine(%q) = %v, want ok=%v", tc.line, err, tc.ok)
			}
		})
	}
}

// TestHelpNamesNoSourcePaths: --help names a doc as one finds it where
// queuectl is installed (a man page, the doc's installed path), never by
// its path in a checkout: docs/job-spec.md means nothing to a user of the
// .deb or a tarball.
func TestHelpNamesNoSourcePaths(t *testing.T) {
	source := regexp.MustCompile(`(^|[^/])\b(docs/[a-z-]+\.md|[A-Z]+\.md)\b`)
	var walk func(path string, cmds []*cli.Command)
	check := func(what, text string) {
		if m := source.FindStringSubmatch(text); m != nil {
			t.Errorf("%s names %s, a path in the source tree:\n%s", what, m[2], text)
		}
	}
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(path + " " + c.Name)
			check(name+" --help", c.Usage+"\n"+c.UsageText+"\n"+c.Description)
			for _, f := range c.Flags {
				if d, ok := f.(cli.DocGenerationFlag); ok {
					check(name+" --"+f.Names()[0], d.GetUsage())
				}
			}
			walk(name, c.Subcommands)
		}
	}
	app := newApp(context.Background())
	check("queuectl --help", app.Usage+"\n"+app.UsageText+"\n"+app.Description)
	walk("", app.Commands)
}

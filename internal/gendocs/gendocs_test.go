package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/cli"
	ucli "github.com/urfave/cli/v2"
)

const root = "../.."

// The committed pages and reference are exactly what the generator writes
// from today's command definitions: a flag or help text changed without
// `go run ./internal/gendocs` fails here.
func TestCommittedDocsAreGenerated(t *testing.T) {
	files := generate(cli.Definition())
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Errorf("%s: %v; run: go run ./internal/gendocs", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the command definitions give; run: go run ./internal/gendocs", name)
		}
	}
	committed, _ := filepath.Glob(filepath.Join(root, "docs", "man", "*"))
	for _, p := range committed {
		rel, _ := filepath.Rel(root, p)
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			t.Errorf("%s is no command's page; run: go run ./internal/gendocs (it removes it)", rel)
		}
	}
}

// Every page renders with man(1) without a warning from groff, and says
// something.
func TestManPagesRender(t *testing.T) {
	man := need(t, "man")
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "man", "*.[15]"))
	if len(pages) < 3 {
		t.Fatalf("found %d man pages under docs/man; want queuectl.1, a page per command and queuectl-spec.5", len(pages))
	}
	for _, p := range pages {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			var out, errs bytes.Buffer
			cmd := exec.Command(man, "--warnings", "-E", "UTF-8", "-l", p)
			cmd.Env = append(os.Environ(), "MANWIDTH=80", "LC_ALL=C.UTF-8", "MANPAGER=cat", "PAGER=cat")
			cmd.Stdout, cmd.Stderr = &out, &errs
			if err := cmd.Run(); err != nil || errs.Len() > 0 {
				t.Errorf("man -l %s: %v\n%s", filepath.Base(p), err, errs.String())
			}
			if !strings.Contains(out.String(), "NAME") {
				t.Errorf("man -l %s printed no NAME section:\n%s", filepath.Base(p), out.String())
			}
		})
	}
}

// Help text is literal in the pages: nothing in it becomes Markdown
// emphasis, a list, a link or roff.
func TestHelpTextStaysLiteral(t *testing.T) {
	w := &doc{level: 1, man: true}
	w.description("Runs *.mk files [fast] <now> with a_b_c.\n1. not a list\n- nor this\n.TH not roff either\n\nExample: echo '*' > x")
	roff := string(renderMan("queuectl-x", "1", w.String()))
	if !strings.Contains(roff, "\n\\&.TH not roff either") {
		t.Errorf("a help line starting with a dot is not escaped:\n%s", roff)
	}
	page := strings.ReplaceAll(roff, `\&`, "") // zero-width: md2man adds it where a text node starts with a dot
	for _, want := range []string{`*.mk files [fast] <now> with a_b_c.`, `1. not a list`, `- nor this`, `echo '*' > x`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, `\fI`) || strings.Contains(page, ".IP") {
		t.Errorf("help text became emphasis or a list:\n%s", page)
	}
}

// need finds a tool, and fails under CI=true where it must be installed.
func need(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found; CI installs it (.ci/run)", tool)
		}
		t.Skipf("%s not found", tool)
	}
	return p
}

// queuectl-spec(5), written by hand in spec.md, and docs/job-spec.md
// describe every field the job parser accepts: a field added to the parser
// fails here until both say what it does.
func TestJobSpecPagesNameEveryField(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join(root, "docs", "job-spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range claim.SpecFields() {
		if !strings.Contains(spec, "\n**"+f+"**") && !strings.Contains(spec, ", **"+f+"**") {
			t.Errorf("internal/gendocs/spec.md (queuectl-spec(5)) does not describe the job field %q", f)
		}
		if !strings.Contains(string(ref), "`"+f+"`") && !strings.Contains(string(ref), "`\""+f+"\"`") {
			t.Errorf("docs/job-spec.md does not describe the job field %q", f)
		}
	}
}

// Every flag that takes a value names it in its usage (`STATE`, `N`, `D`),
// as --help, the man pages and docs/commands.md show it: without one,
// urfave/cli shows the bare word "value" (restart --state value).
func TestEveryFlagNamesItsValue(t *testing.T) {
	var walk func(path string, cmds []*ucli.Command)
	check := func(path string, flags []ucli.Flag) {
		for _, f := range flags {
			names, _, _ := strings.Cut(f.String(), "\t")
			if strings.HasSuffix(names, " value") || strings.Contains(names, " value,") {
				t.Errorf("%s: flag %q has no placeholder; put one in backquotes in its usage", path, names)
			}
		}
	}
	walk = func(path string, cmds []*ucli.Command) {
		for _, c := range cmds {
			check(path+" "+c.Name, c.Flags)
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	app := cli.Definition()
	check(app.Name, app.Flags)
	walk(app.Name, app.Commands)
}

package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
)

// doc writes Markdown: for a man page (man: options as a definition list,
// which md2man turns into .TP) or for GitHub (options as a bullet list).
// level is the Markdown heading level of depth 0.
type doc struct {
	strings.Builder
	level int
	man   bool
}

func (w *doc) heading(depth int, text string) {
	fmt.Fprintf(w, "%s %s\n\n", strings.Repeat("#", w.level+depth), text)
}

func (w *doc) line(text string) { fmt.Fprintf(w, "%s\n\n", text) }

func (w *doc) term(term, def string) {
	if w.man {
		fmt.Fprintf(w, "%s\n: %s\n\n", term, def)
		return
	}
	fmt.Fprintf(w, "- %s: %s\n", term, def)
}

// command writes cmd's usage, description and options, then each of its
// subcommands the same way one heading level down.
func (w *doc) command(name string, cmd *cli.Command) {
	if !w.man {
		w.heading(0, name)
		w.line(escape(upperFirst(cmd.Usage)) + ".")
		for _, u := range synopses(name, cmd) {
			fmt.Fprintf(w, "    %s\n", plain(u))
		}
		w.WriteString("\n")
	}
	w.description(cmd.Description)
	if len(cmd.Flags) > 0 {
		if !w.man {
			w.line("Options:")
		}
		w.flags(cmd.Flags)
	}
	for _, sub := range visible(cmd.Subcommands) {
		sw := &doc{level: w.level + 1, man: w.man}
		if w.man {
			sw.level = max(w.level+1, 3) // md2man: # and ## are .SH, ### is .SS
			sw.heading(0, name+" "+sub.Name)
			sw.line(escape(upperFirst(sub.Usage)) + ".")
		}
		sw.command(name+" "+sub.Name, sub)
		w.WriteString(sw.String())
	}
}

// flags lists each flag as --help shows it: its names with the value's
// placeholder, its usage and its default.
func (w *doc) flags(flags []cli.Flag) {
	for _, f := range flags {
		names, usage, _ := strings.Cut(f.String(), "\t")
		if w.man {
			w.term("**"+escape(names)+"**", escape(usage))
		} else {
			w.term("`"+names+"`", escape(usage))
		}
	}
	if !w.man {
		w.WriteString("\n")
	}
}

// description turns a command's help text into Markdown: its paragraphs
// stay paragraphs, and indented lines (examples) stay as they are.
func (w *doc) description(text string) {
	var code []string
	flush := func() {
		if len(code) > 0 {
			fmt.Fprintf(w, "```\n%s\n```\n\n", strings.Join(code, "\n"))
			code = nil
		}
	}
	for _, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		var prose []string
		for _, l := range strings.Split(para, "\n") {
			if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
				if len(prose) > 0 {
					w.line(escape(strings.Join(prose, "\n")))
					prose = nil
				}
				code = append(code, strings.TrimRight(strings.TrimPrefix(l, "   "), " "))
				continue
			}
			flush()
			if m := example.FindStringSubmatch(l); m != nil {
				prose = append(prose, m[1])
				w.line(escape(strings.Join(prose, "\n")))
				prose, code = nil, []string{m[2]}
				continue
			}
			prose = append(prose, l)
		}
		flush()
		if len(prose) > 0 {
			w.line(escape(strings.Join(prose, "\n")))
		}
	}
}

// example is a help text's one-line example, shown as code.
var example = regexp.MustCompile(`^(Example[^:]{0,40}:) +(.+)$`)

// orderedItem is a line Markdown would take for an item of a numbered list.
var orderedItem = regexp.MustCompile(`^ *[0-9]+\.`)

// escape makes text literal in Markdown: no emphasis, links, HTML, tables,
// headings or lists out of what a help text says.
func escape(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if t := strings.TrimLeft(line, " "); t != "" && strings.ContainsRune("-+:", rune(t[0])) {
			b.WriteString("\\")
		}
		listDot := orderedItem.FindStringIndex(line)
		for i, r := range line {
			if strings.ContainsRune("\\`*_[]<>|#~", r) || (listDot != nil && i == listDot[1]-1) {
				b.WriteRune('\\')
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// plain undoes the Markdown of a synopsis line, for a code block.
func plain(s string) string {
	s = strings.NewReplacer("**", "", "*", "").Replace(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

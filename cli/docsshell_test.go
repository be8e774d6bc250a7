package cli

import (
	"strings"
	"unicode"
)

// shellCommands splits sh text into its simple commands, each a list of
// words with quotes and backslashes removed, as far as the docs need: a
// newline, `;`, `|`, `&` and `&&`/`||` end a command; `#` at a word's start
// begins a comment; a redirection (`>f`, `2>&1`, `<in`) is dropped with its
// target; a command substitution `$(…)`, bare or in double quotes, is a
// command of its own and stands in its word as "$(…)". A backslash before
// a newline joins the lines.
func shellCommands(text string) [][]string {
	p := &shParser{src: []rune(text)}
	p.parse(false)
	return p.cmds
}

type shParser struct {
	src  []rune
	i    int
	cmds [][]string
}

// parse reads commands until the end of the text or, inside a
// substitution (sub), the `)` that closes it.
func (p *shParser) parse(sub bool) {
	var words []string
	var word strings.Builder
	inWord, dropNext := false, false
	endWord := func() {
		if inWord && !dropNext {
			words = append(words, word.String())
		}
		if inWord {
			dropNext = false
		}
		word.Reset()
		inWord = false
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			p.cmds = append(p.cmds, words)
		}
		words, dropNext = nil, false
	}
	for ; p.i < len(p.src); p.i++ {
		c := p.src[p.i]
		switch {
		case c == '\\' && p.i+1 < len(p.src):
			p.i++
			if p.src[p.i] != '\n' {
				word.WriteRune(p.src[p.i])
				inWord = true
			}
		case c == '\'':
			end := p.i + 1
			for end < len(p.src) && p.src[end] != '\'' {
				end++
			}
			word.WriteString(string(p.src[p.i+1 : min(end, len(p.src))]))
			inWord, p.i = true, end
		case c == '"':
			p.doubleQuoted(&word)
			inWord = true
		case c == '$' && p.i+1 < len(p.src) && p.src[p.i+1] == '(':
			p.i += 2
			p.parse(true)
			word.WriteString("$(…)")
			inWord = true
		case c == ')' && sub:
			endCmd()
			return
		case c == '\n' || c == ';' || c == '|' || c == '&' || c == ')' || c == '(' && !inWord:
			endCmd() // a subshell's parentheses end commands too
		case c == '>' || c == '<':
			if inWord && strings.Trim(word.String(), "0123456789") == "" {
				word.Reset() // an fd number: 2>
				inWord = false
			}
			endWord()
			for p.i+1 < len(p.src) && strings.ContainsRune(">&", p.src[p.i+1]) {
				p.i++
			}
			dropNext = true
			if p.i+1 < len(p.src) && unicode.IsDigit(p.src[p.i+1]) && p.src[p.i] == '&' {
				p.i++ // >&2: the target is the fd
				dropNext = false
			}
		case c == '#' && !inWord:
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
			endCmd()
		case c == ' ' || c == '\t':
			endWord()
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	endCmd()
}

// doubleQuoted reads a "…" word part from p.i, its opening quote, to its
// closing one, running the substitutions inside it.
func (p *shParser) doubleQuoted(word *strings.Builder) {
	for p.i++; p.i < len(p.src) && p.src[p.i] != '"'; p.i++ {
		switch c := p.src[p.i]; {
		case c == '\\' && p.i+1 < len(p.src):
			p.i++
			word.WriteRune(p.src[p.i])
		case c == '$' && p.i+1 < len(p.src) && p.src[p.i+1] == '(':
			p.i += 2
			p.parse(true)
			word.WriteString("$(…)")
		default:
			word.WriteRune(c)
		}
	}
}

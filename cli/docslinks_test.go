package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// generatedDocs are pages a generator writes (make docs) rather than a
// person: a checkout made before the generator ran lacks them, so a link to
// one is checked only once it exists.
var generatedDocs = map[string]bool{"docs/commands.md": true}

var (
	codeFence = regexp.MustCompile("(?ms)^```.*?^```$")
	codeSpan  = regexp.MustCompile("`[^`\n]*`")
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// anchors returns the heading anchors GitHub makes for a Markdown text:
// lower case, spaces to '-', everything but letters, digits, '-' and '_'
// dropped; a repeated one gets -1, -2, ….
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(codeFence.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(m[1])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for n := 1; out[a]; n++ {
			a = b.String() + "-" + strconv.Itoa(n)
		}
		out[a] = true
	}
	return out
}

func TestDocsLinksResolve(t *testing.T) {
	links := 0
	for _, file := range docFiles(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		prose := codeSpan.ReplaceAllString(codeFence.ReplaceAllString(string(text), ""), "")
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			full := file
			if path != "" {
				full = filepath.Join(filepath.Dir(file), path)
			}
			rel, _ := filepath.Rel("..", full)
			body, err := os.ReadFile(full)
			if os.IsNotExist(err) && generatedDocs[filepath.ToSlash(rel)] {
				continue
			}
			if _, statErr := os.Stat(full); statErr != nil {
				t.Errorf("%s links to %s: %v", file, target, statErr)
				continue
			}
			if anchor != "" && strings.HasSuffix(full, ".md") && !anchors(string(body))[anchor] {
				t.Errorf("%s links to %s: %s has no heading with anchor #%s", file, target, rel, anchor)
			}
		}
	}
	if links < 20 {
		t.Errorf("found %d relative links in the docs; the pattern must be missing them", links)
	}
}

func TestAnchors(t *testing.T) {
	got := anchors("# Make, cron\n## run: a job in the foreground\n```sh\n# not a heading\n```\n### make -j: heavy steps\n## `unique_key` and batches\n## Dup\n## Dup\n")
	want := map[string]bool{"make-cron": true, "run-a-job-in-the-foreground": true, "make--j-heavy-steps": true,
		"unique_key-and-batches": true, "dup": true, "dup-1": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("anchors: %v, want %v", got, want)
	}
}

func TestShellCommands(t *testing.T) {
	for _, tc := range []struct {
		text string
		want [][]string
	}{
		{`a 'b c' "d e" f\ g # comment`, [][]string{{"a", "b c", "d e", "f g"}}},
		{"x=$(q enqueue -q '{\"a\": 1}') && q wait \"$x\"", [][]string{{"q", "enqueue", "-q", `{"a": 1}`}, {"x=$(…)"}, {"q", "wait", "$x"}}},
		{"echo '{}' > \"$f.tmp\" 2>/dev/null; mv a b >&2", [][]string{{"echo", "{}"}, {"mv", "a", "b"}}},
		{"q schedule add n --cron '0 3 * * *' \\\n    --timeout 1h | jq .", [][]string{{"q", "schedule", "add", "n", "--cron", "0 3 * * *", "--timeout", "1h"}, {"jq", "."}}},
		{"q a 'line one\nline two'\nq b", [][]string{{"q", "a", "line one\nline two"}, {"q", "b"}}},
		{`echo "$(tail -n 3 "$F")"`, [][]string{{"tail", "-n", "3", "$F"}, {"echo", "$(…)"}}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			if got := shellCommands(tc.text); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("shellCommands(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

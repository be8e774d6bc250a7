package run

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

func TestLastLines(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var big strings.Builder
	for i := range 2000 { // 17 KiB: more than LastLines reads
		fmt.Fprintf(&big, "line %d\n", i)
	}
	long := strings.Repeat("x", 1000)
	kept := claim.Tail{Data: []byte("a\nb\nlast from the tail\n"), Size: 23}
	for _, tt := range []struct {
		name string
		run  claim.Run
		n    int
		want []string
	}{
		{"the last n of a big file", claim.Run{Host: HostID(), StderrPath: write("big", big.String())}, 3,
			[]string{"line 1997", "line 1998", "line 1999"}},
		{"fewer lines than n, no final newline", claim.Run{Host: HostID(), StderrPath: write("short", "one\ntwo")}, 10,
			[]string{"one", "two"}},
		{"a long line is cut", claim.Run{Host: HostID(), StderrPath: write("long", long+"\n")}, 1,
			[]string{strings.Repeat("x", lineCells) + "…"}},
		// Quoted by wait and run on a terminal, a job's escapes would act
		// there: clear the screen, leave queuectl's own lines red, show a
		// progress bar's first state (the line cut at 300 bytes) for its
		// last.
		{"terminal escapes removed", claim.Run{Host: HostID(), StderrPath: write("escapes",
			"bad\x1b]0;title\x07\x1b[2J\x1b[31m red\x1b[0m\n")}, 10, []string{"bad red"}},
		{"a progress bar's last state", claim.Run{Host: HostID(), StderrPath: write("progress",
			strings.Repeat("\rdownloading  10%", 50)+"\rdownloading 100%\nerror: checksum mismatch\n")}, 2,
			[]string{"downloading 100%", "error: checksum mismatch"}},
		{"no file: nothing", claim.Run{Host: HostID(), StderrPath: filepath.Join(dir, "none")}, 10, nil},
		{"another host's run: the kept tail", claim.Run{Host: "elsewhere/boot", StderrPath: "/x/1.err",
			Tails: &claim.Tails{Stderr: kept}}, 1, []string{"last from the tail"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Log{Run: tt.run, Stderr: true}.LastLines(tt.n)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("LastLines(%d) = %q, %v; want %q", tt.n, got, err, tt.want)
			}
		})
	}
}

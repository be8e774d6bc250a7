// Command gendocs writes queuectl's man pages and its command reference
// from the command definitions (cli.Definition) and the job file format
// (spec.md), so that `queuectl CMD --help`, queuectl-CMD(1) and
// docs/commands.md never drift apart:
//
//	go run ./internal/gendocs            # writes docs/man/*.[15] and docs/commands.md
//	go run ./internal/gendocs -dir OUT   # the same tree under OUT
//
// The pages carry no date or version, so the same definitions always give
// the same bytes (a test compares the committed pages with a fresh run).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/queuectl/queuectl/cli"
)

func main() {
	dir := flag.String("dir", ".", "write docs/ under `DIR`")
	flag.Parse()
	if err := write(*dir, generate(cli.Definition())); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: error: %v\n", err)
		os.Exit(1)
	}
}

// write puts each file at its path under dir, and removes man pages of
// commands that no longer exist.
func write(dir string, files map[string][]byte) error {
	old, _ := filepath.Glob(filepath.Join(dir, "docs", "man", "queuectl*.[15]"))
	for _, p := range old {
		rel, _ := filepath.Rel(dir, p)
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

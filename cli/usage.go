package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// tasks groups the commands by what a user is doing, for `queuectl` alone
// and the categories of --help. A command named in none (a new one) is
// listed under "more" until it is placed here; names of commands that do
// not exist are left out.
var tasks = []struct {
	name     string
	commands []string
}{
	{"run jobs", []string{"enqueue", "run", "worker", "schedule", "watch", "ingest"}},
	{"look", []string{"status", "list", "show", "logs", "wait", "serve"}},
	{"steer", []string{"cancel", "restart", "rm", "edit", "hold", "release", "pause", "resume", "queue", "dlq"}},
	{"operate", []string{"config", "purge", "rejected", "db", "doctor", "bench", "completion", "version"}},
}

// setCategories files every command under its task, for --help, in the
// order tasks gives.
func setCategories(cmds []*cli.Command) {
	rank := map[string]int{}
	for _, t := range tasks {
		for _, name := range t.commands {
			rank[name] = len(rank) + 1
		}
	}
	for _, cmd := range cmds {
		cmd.Category = "more"
		for _, t := range tasks {
			if slices.Contains(t.commands, cmd.Name) {
				cmd.Category = t.name
			}
		}
	}
	slices.SortStableFunc(cmds, func(a, b *cli.Command) int { return cmp.Compare(rank[a.Name], rank[b.Name]) })
}

// shortUsage is what `queuectl` alone prints: the commands grouped by
// task, and how to start; --help has the rest.
func shortUsage(app *cli.App) string {
	var b strings.Builder
	b.WriteString("queuectl runs shell commands as jobs in the background: a worker runs them with\nretries, keeps their logs, and dead-letters those that keep failing.\n\n")
	groups := map[string][]string{}
	for _, cmd := range app.VisibleCommands() {
		groups[cmd.Category] = append(groups[cmd.Category], cmd.Name)
	}
	for _, t := range append(tasks, struct {
		name     string
		commands []string
	}{name: "more"}) {
		names := groups[t.name]
		if t.commands != nil {
			names = names[:0:0]
			for _, name := range t.commands {
				if app.Command(name) != nil {
					names = append(names, name)
				}
			}
		}
		if len(names) > 0 {
			fmt.Fprintf(&b, "  %-9s %s\n", t.name, strings.Join(names, "  "))
		}
	}
	b.WriteString(`
Start:
  queuectl worker start      runs jobs; it keeps its terminal, so open a second one for:
  queuectl run -- echo hi    runs "echo hi" as a job and prints hi

queuectl --help: every command; queuectl COMMAND --help: one, with an example.
`)
	return b.String()
}

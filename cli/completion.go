package cli

import (
	_ "embed"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/queuectl/queuectl/claim"
	"github.com/urfave/cli/v2"
)

// The shell side of completion: each runs the words typed so far with
// --generate-bash-completion, and queuectl prints the candidates.
var (
	//go:embed completion.bash
	bashCompletion string
	//go:embed completion.fish
	fishCompletion string
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: `Completes commands, flags, job ids, states, queues and config keys.

Example: queuectl completion bash >> ~/.bashrc   (zsh: >> ~/.zshrc; fish: > ~/.config/fish/completions/queuectl.fish)`,
		Action: func(c *cli.Context) error {
			a, err := args(c, 1, 1)
			if err != nil {
				return err
			}
			switch a[0] {
			case "bash":
				_, err = io.WriteString(c.App.Writer, bashCompletion)
			case "zsh":
				_, err = io.WriteString(c.App.Writer, "autoload -U +X compinit bashcompinit && compinit && bashcompinit\n"+bashCompletion)
			case "fish":
				_, err = io.WriteString(c.App.Writer, fishCompletion)
			default:
				return withHint(usagef("no completion for shell %q", a[0]), "queuectl completion bash  (or zsh, fish)")
			}
			return err
		},
	}
}

// completeWith returns cmd's completion: the values of --state and --queue
// after those flags, the command's flags after a "-", its subcommands, and
// for its arguments what its ArgsUsage names: job ids (ID), config keys
// (KEY), shells. args is the command line being completed.
func completeWith(cmd *cli.Command, args []string) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		var last string
		if n := len(args); n > 2 && args[n-1] == "--generate-bash-completion" {
			last = args[n-2]
		}
		out := c.App.Writer
		switch name, _ := flagName(last); {
		case last == "":
		case name == "state" && strings.HasPrefix(last, "-"):
			for _, st := range claim.States {
				fmt.Fprintln(out, st)
			}
			return
		case name == "queue" && strings.HasPrefix(last, "-"):
			printLines(out, completeQueues(c))
			return
		case strings.HasPrefix(last, "-"):
			cli.DefaultCompleteWithFlags(cmd)(c)
			return
		}
		if slices.ContainsFunc(cmd.Subcommands, func(s *cli.Command) bool { return s.Name != "help" }) {
			cli.DefaultCompleteWithFlags(cmd)(c)
			return
		}
		switch {
		case strings.Contains(cmd.ArgsUsage, "ID"):
			printLines(out, completeIDs(c))
		case strings.Contains(cmd.ArgsUsage, "KEY") && c.NArg() == 0:
			for _, k := range claim.ConfigKeys {
				fmt.Fprintln(out, k.Name)
			}
		case cmd.Name == "completion":
			fmt.Fprintln(out, "bash\nzsh\nfish")
		}
	}
}

// completeLimit bounds the job ids offered: the newest first.
const completeLimit = 500

func completeIDs(c *cli.Context) []string {
	h, err := openHome(c)
	if err != nil {
		return nil
	}
	defer h.store.Close()
	f := claim.Filter{Newest: true, Limit: completeLimit}
	if strings.HasPrefix(c.Command.HelpName, "queuectl dlq") {
		f.State = claim.Dead
	}
	jobs, err := h.store.List(c.Context, f)
	if err != nil {
		return nil
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

func completeQueues(c *cli.Context) []string {
	h, err := openHome(c)
	if err != nil {
		return nil
	}
	defer h.store.Close()
	counts, err := h.store.QueueCounts(c.Context)
	if err != nil {
		return nil
	}
	queues := []string{"default"}
	for q := range counts {
		if !slices.Contains(queues, q) {
			queues = append(queues, q)
		}
	}
	sort.Strings(queues)
	return queues
}

func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// setCompletion gives every command that has none completeWith.
func setCompletion(cmds []*cli.Command, args []string) {
	for _, cmd := range cmds {
		if cmd.BashComplete == nil {
			cmd.BashComplete = completeWith(cmd, args)
		}
		setCompletion(cmd.Subcommands, args)
	}
}

package cli

import (
	_ "embed"
	"io"

	"github.com/urfave/cli/v2"
)

// The shell side of completion: each runs `queuectl __complete` with the
// words typed so far (complete.go) and turns its answer into candidates.
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

package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/queuectl/queuectl/claim"
	"github.com/urfave/cli/v2"
)

func queueCommand() *cli.Command {
	return &cli.Command{
		Name:        "queue",
		Usage:       "per-queue settings: how many of a queue's jobs run at once",
		Description: "Example: queuectl queue set heavy --max-running 2",
		Subcommands: []*cli.Command{{
			Name:      "set",
			Usage:     "limit how many jobs of a queue run at once, across every worker and host",
			ArgsUsage: "NAME --max-running N",
			Description: `At most N jobs of the queue run at once, whichever workers run them; 0: no
limit. Stored in the database; running workers apply it at their next claim.

Example: queuectl queue set heavy --max-running 2`,
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "max-running", Usage: "at most `N` jobs of the queue at once (0: no limit)"},
			},
			Action: withHome(func(c *cli.Context, h *home) error {
				a, err := args(c, 1, 1)
				if err != nil {
					return err
				}
				if !c.IsSet("max-running") {
					return withHint(usagef("give the limit with --max-running N"), "queuectl queue set "+a[0]+" --max-running 2")
				}
				if err := h.store.SetQueueLimit(c.Context, a[0], c.Int("max-running")); err != nil {
					return err
				}
				if n := c.Int("max-running"); n == 0 {
					fmt.Fprintf(c.App.Writer, "queue %s: no limit on running jobs\n", a[0])
				} else {
					fmt.Fprintf(c.App.Writer, "queue %s: at most %d running at once\n", a[0], n)
				}
				overLimit(c, h, a[0], c.Int("max-running"))
				return nil
			}),
		}, {
			Name:        "list",
			Usage:       "list every queue with jobs, settings or a pause: its limit, its jobs per state and whether it is paused",
			Description: "Example: queuectl queue list --json",
			Flags:       []cli.Flag{jsonFlag},
			Action: withHome(func(c *cli.Context, h *home) error {
				if _, err := args(c, 0, 0); err != nil {
					return err
				}
				limits, counts, err := queueSettings(c.Context, h)
				if err != nil {
					return err
				}
				paused, err := h.store.Paused(c.Context)
				if err != nil {
					return err
				}
				return printer(c).Queues(counts, limits, paused)
			}),
		}, {
			Name:        "rm",
			Usage:       "forget a queue's settings: its jobs run without limit",
			ArgsUsage:   "NAME",
			Description: "Example: queuectl queue rm heavy",
			Action: withHome(func(c *cli.Context, h *home) error {
				a, err := args(c, 1, 1)
				if err != nil {
					return err
				}
				err = h.store.RemoveQueue(c.Context, a[0])
				if errors.Is(err, claim.ErrNotFound) {
					// queue list shows a queue that is only paused: rm
					// finds no limit, and the pause is resume's.
					if paused, perr := h.store.Paused(c.Context); perr == nil && slices.Contains(paused, a[0]) {
						return withHint(fmt.Errorf("%w: no limit to forget; queue list shows it for its pause, which resume ends", err),
							"queuectl resume --queue "+a[0])
					}
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "queue %s: settings forgotten; its jobs run without limit\n", a[0])
				return nil
			}),
		}},
	}
}

// queueSettings reads the queues' settings and their jobs per state.
func queueSettings(ctx context.Context, h *home) ([]claim.Queue, map[string]map[claim.State]int, error) {
	limits, err := h.store.Queues(ctx)
	if err != nil {
		return nil, nil, err
	}
	counts, err := h.store.QueueCounts(ctx)
	return limits, counts, err
}

// overLimit says on stderr that a limit just lowered below what queue runs
// stops none of it: status would show "4/2 running", which reads as a limit
// not kept. A failed read says nothing: the limit is set either way.
func overLimit(c *cli.Context, h *home, queue string, limit int) {
	if limit == 0 {
		return
	}
	counts, err := h.store.QueueCounts(c.Context)
	if n := counts[queue][claim.Processing]; err == nil && n > limit {
		fmt.Fprintf(c.App.ErrWriter, "queuectl: queue %s runs %d jobs now, more than %d: they go on; no more start until fewer than %d run\n",
			queue, n, limit, limit)
	}
}

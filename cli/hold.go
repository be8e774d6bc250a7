package cli

import (
	"github.com/urfave/cli/v2"
)

func holdCommand() *cli.Command {
	return &cli.Command{
		Name:      "hold",
		Usage:     "keep pending or failed jobs from being claimed, without pausing their queue",
		ArgsUsage: "ID...",
		Description: `A held job keeps its place (priority, run time, enqueue order), its attempts and its
unique_key until released. A hold keeps a job from starting, not from dying: when a job it
waits for (--after) ends dead or canceled, it goes dead with it, as a pending one does, and
dlq retry of that job brings it back as pending. Holding a held job changes nothing, and says
so. Exit 3 for an unknown job, 4 for one that is neither pending, failed nor held.

Example: queuectl hold @last && queuectl release @last`,
		Flags: []cli.Flag{jsonFlag},
		Action: withHome(func(c *cli.Context, h *home) error {
			ids, err := args(c, 1, -1)
			if err != nil {
				return err
			}
			out := &jobsOut{c: c, store: h.store}
			return out.end(eachJob(c, h, ids, func(id string) error {
				j, changed, err := h.store.Hold(c.Context, id)
				if err != nil {
					return err
				}
				if !changed {
					out.did(j, "Job %s was held already", id)
					return nil
				}
				out.did(j, "Held job %s", id)
				return nil
			}))
		}),
	}
}

func releaseCommand() *cli.Command {
	return &cli.Command{
		Name:      "release",
		Usage:     "put held jobs back in the queue, as they were",
		ArgsUsage: "ID...",
		Description: `Exit 3 for an unknown job, 4 for one that is not held.

Example: queuectl release nightly-db`,
		Flags: []cli.Flag{jsonFlag},
		Action: withHome(func(c *cli.Context, h *home) error {
			ids, err := args(c, 1, -1)
			if err != nil {
				return err
			}
			out := &jobsOut{c: c, store: h.store}
			return out.end(eachJob(c, h, ids, func(id string) error {
				j, err := h.store.ReleaseHeld(c.Context, id)
				if err != nil {
					return err
				}
				out.did(j, "Released job %s: %s again", id, j.State)
				return nil
			}))
		}),
	}
}

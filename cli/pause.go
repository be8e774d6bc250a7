package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/suggest"
	"github.com/urfave/cli/v2"
)

var queueFlag = &cli.StringFlag{Name: "queue", Usage: "only queue `Q` (default: every queue)"}

func pauseCommand() *cli.Command {
	return &cli.Command{
		Name:  "pause",
		Usage: "stop every worker from starting jobs of a queue (running jobs go on)",
		Description: `Persisted in the store until resume; every worker, in every process, stops
claiming at once. --wait returns once no job of the queue runs.

Example: queuectl pause --queue mail --wait`,
		Flags: []cli.Flag{queueFlag, &cli.BoolFlag{Name: "wait", Usage: "return once nothing of it runs"}},
		Action: withHome(func(c *cli.Context, h *home) error {
			if err := noQueueArg(c); err != nil {
				return err
			}
			q := queueArg(c)
			known := knownQueues(c.Context, h.store)
			if err := h.store.Pause(c.Context, q); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "Paused %s\n", queueWords(q))
			warnUnknownQueue(c, q, known)
			if !c.Bool("wait") {
				return nil
			}
			err := h.store.WaitUntil(c.Context, h.config.PollInterval, func() (bool, error) {
				n, err := h.store.Running(c.Context, q)
				return n == 0, err
			})
			if errors.Is(err, context.Canceled) {
				return &exitStatus{exitInterrupted, nil}
			}
			if err == nil {
				if q == claim.AllQueues {
					fmt.Fprintln(c.App.Writer, "No job runs in any queue")
				} else {
					fmt.Fprintf(c.App.Writer, "No job runs in %s\n", queueWords(q))
				}
			}
			return err
		}),
	}
}

func resumeCommand() *cli.Command {
	return &cli.Command{
		Name:  "resume",
		Usage: "let workers start jobs of a paused queue again",
		Description: `Without --queue, resumes every queue. Exit 4 for one queue while every queue
is paused.

Example: queuectl resume --queue mail`,
		Flags: []cli.Flag{queueFlag},
		Action: withHome(func(c *cli.Context, h *home) error {
			if err := noQueueArg(c); err != nil {
				return err
			}
			q := queueArg(c)
			paused, perr := h.store.Paused(c.Context)
			err := h.store.Resume(c.Context, q)
			if errors.Is(err, claim.ErrConflict) {
				return withHint(err, "queuectl resume")
			}
			if err != nil {
				return err
			}
			if perr == nil && q != claim.AllQueues && !slices.Contains(paused, q) {
				fmt.Fprintf(c.App.Writer, "Queue %s was not paused\n", q)
				return nil
			}
			if perr == nil && q == claim.AllQueues && len(paused) == 0 {
				fmt.Fprintln(c.App.Writer, "No queue was paused")
				return nil
			}
			fmt.Fprintf(c.App.Writer, "Resumed %s\n", queueWords(q))
			return nil
		}),
	}
}

func queueArg(c *cli.Context) string {
	if c.IsSet("queue") {
		return c.String("queue")
	}
	return claim.AllQueues
}

func queueWords(q string) string {
	if q == claim.AllQueues {
		return "every queue"
	}
	return "queue " + q
}

// knownQueues lists the queues that have jobs, settings or a pause: nil
// when they cannot be read (then nothing is said of an unknown queue).
func knownQueues(ctx context.Context, s *claim.Store) []string {
	counts, err := s.QueueCounts(ctx)
	if err != nil {
		return nil
	}
	known := []string{claim.DefaultQueue}
	for q := range counts {
		known = append(known, q)
	}
	if set, err := s.Queues(ctx); err == nil {
		for _, q := range set {
			known = append(known, q.Name)
		}
	}
	if paused, err := s.Paused(ctx); err == nil {
		known = append(known, paused...)
	}
	return known
}

// warnUnknownQueue says on stderr that queue q, just paused, has no jobs,
// settings or pause yet: a typo leaves the queue meant running. Pausing a
// queue before its jobs come is allowed, so it is only said.
func warnUnknownQueue(c *cli.Context, q string, known []string) {
	if q == claim.AllQueues || known == nil || slices.Contains(known, q) {
		return
	}
	msg := fmt.Sprintf("queuectl: warning: queue %s has no jobs yet; its jobs will wait until resume", q)
	if near := suggest.Nearest(q, known); near != "" {
		msg += fmt.Sprintf(" (did you mean %s? queuectl resume --queue %s; queuectl pause --queue %s)", near, q, near)
	}
	fmt.Fprintln(c.App.ErrWriter, msg)
}

// noQueueArg refuses arguments to pause and resume, whose queue is given
// with --queue: a queue given as an argument is named in the hint.
func noQueueArg(c *cli.Context) error {
	if c.NArg() == 1 && !c.IsSet("queue") {
		q := c.Args().First()
		return withHint(usagef("the queue is given with --queue, not as an argument: %s", q),
			"queuectl "+c.Command.Name+" --queue "+shellQuote([]string{q}))
	}
	_, err := args(c, 0, 0)
	return err
}

package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/queuectl/queuectl/claim"
	"github.com/urfave/cli/v2"
)

// enqueueStream stores the jobs of `enqueue -` or `enqueue -f FILE` as they
// are read, in one transaction (claim.Store.EnqueueStream): memory stays
// bounded at any input size. A stream of one job is enqueued as an argument
// is (to a running worker, if one serves the home). What is printed about
// the jobs waits in an unlinked file of the home until the transaction
// commits: nothing is said stored that a later refusal takes back.
func enqueueStream(c *cli.Context, in io.Reader) error {
	var batch bool // more than one line came
	err := enqueueLines(c, in, &batch)
	var hint interface{ Hint() string }
	if batch && err != nil && !errors.As(err, &hint) && (errors.Is(err, claim.ErrInvalid) || errors.Is(err, claim.ErrConflict)) {
		// Refused, the batch stored nothing: its good lines are not in.
		err = withHint(err, "none of the batch was enqueued (a batch on stdin is stored whole or not at all): mend that line and send it all again")
	}
	return err
}

// enqueueLines is enqueueStream's work; batch is set once a second line
// came.
func enqueueLines(c *cli.Context, in io.Reader, batch *bool) error {
	next, stop := iter.Pull2(claim.ParseStream(in))
	defer stop()
	first, err, ok := next()
	if err != nil || !ok {
		return err
	}
	second, err, ok := next()
	*batch = ok || err != nil
	if err != nil {
		return err
	}
	if !ok {
		return enqueueJobs(c, []claim.NewJob{first})
	}
	seq := func(yield func(claim.NewJob, error) bool) {
		if !yield(first, nil) || !yield(second, nil) {
			return
		}
		for {
			nj, err, ok := next()
			if !ok || !yield(nj, err) {
				return
			}
		}
	}
	return withStore(func(c *cli.Context, h *home) error {
		out, err := scratchFile(h)
		if err != nil {
			return err
		}
		defer out.Close()
		notes, err := scratchFile(h)
		if err != nil {
			return err
		}
		defer notes.Close()
		bout, bnotes := bufio.NewWriter(out), bufio.NewWriter(notes)
		p := printer(c)
		p.Out = bout
		w := p.EnqueuedStream(c.Bool("quiet"))
		_, err = h.store.EnqueueStream(c.Context, seq, func(rs []claim.Result) error {
			for _, r := range rs {
				if r.Outcome == claim.Skipped && !c.Bool("json") {
					fmt.Fprintf(bnotes, "queuectl: skipped: job %s with unique key %q is %s\n", r.Job.ID, r.Job.UniqueKey, r.Job.State)
				}
			}
			return w.Add(rs)
		})
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			return err
		}
		if err := replay(bnotes, notes, c.App.ErrWriter); err != nil {
			return err
		}
		return replay(bout, out, c.App.Writer)
	})(c)
}

// scratchFile is an unlinked file in the home, private as the home is.
func scratchFile(h *home) (*os.File, error) {
	f, err := os.CreateTemp(h.dir, ".enqueue-*.tmp")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}

// replay copies what b buffered into f to w.
func replay(b *bufio.Writer, f *os.File, w io.Writer) error {
	if err := b.Flush(); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, f)
	return err
}

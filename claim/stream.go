package claim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
)

// MaxSpecLine bounds one line of a stream of job specs, and a job spec
// that spans lines: the bound of a spool file (SPEC §6).
const MaxSpecLine = 1 << 20

// ParseStream decodes what `enqueue -` reads, as ParseBatch does, as it
// arrives: JSON lines, one job spec per line, blank lines skipped; or one
// JSON object over several lines (up to MaxSpecLine). Errors name the line.
// Memory stays bounded by one line, whatever the input's size.
func ParseStream(r io.Reader) iter.Seq2[NewJob, error] {
	return func(yield func(NewJob, error) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		var head []byte // the blank lines and the first spec line, as read
		n := 0
		for {
			line, err := readLine(br)
			if len(bytes.TrimSpace(line)) == 0 && err == nil {
				head, n = append(head, line...), n+1
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				yield(NewJob{}, fmt.Errorf("line %d: %w", n+1, err))
				return
			}
			head, n = append(head, line...), n+1
			if len(bytes.TrimSpace(line)) == 0 {
				whole(br, head, yield) // no spec: ParseBatch says so as before
				return
			}
			if nj, perr := ParseSpec(line); perr == nil {
				if yield(nj, nil) && err == nil {
					parseLines(br, n, yield)
				}
				return
			}
			whole(br, head, yield) // one object over several lines
			return
		}
	}
}

// parseLines yields the specs of the lines after line n.
func parseLines(br *bufio.Reader, n int, yield func(NewJob, error) bool) {
	for {
		line, err := readLine(br)
		n++
		if err != nil && !errors.Is(err, io.EOF) {
			yield(NewJob{}, fmt.Errorf("line %d: %w", n, err))
			return
		}
		if len(bytes.TrimSpace(line)) > 0 {
			nj, perr := ParseSpec(line)
			if perr != nil {
				yield(NewJob{}, fmt.Errorf("line %d: %w", n, perr))
				return
			}
			if !yield(nj, nil) {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// whole reads the rest of a spec that spans lines, head its start, and
// yields what ParseBatch makes of it.
func whole(br *bufio.Reader, head []byte, yield func(NewJob, error) bool) {
	rest, err := io.ReadAll(io.LimitReader(br, int64(MaxSpecLine-len(head)+1)))
	if err != nil {
		yield(NewJob{}, invalidf("read job specs: %v", err))
		return
	}
	data := append(head, rest...)
	if len(data) > MaxSpecLine {
		_, err := ParseSpec(bytes.SplitN(data, []byte("\n"), 2)[0])
		yield(NewJob{}, fmt.Errorf("line 1: %w", err))
		return
	}
	jobs, err := ParseBatch(data)
	if err != nil {
		yield(NewJob{}, err)
		return
	}
	for _, nj := range jobs {
		if !yield(nj, nil) {
			return
		}
	}
}

// readLine reads one line with its newline; io.EOF with the last line when
// it has none. A line over MaxSpecLine is refused.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > MaxSpecLine+1 {
			return nil, invalidf("a job spec line is over %d KiB; a job spec is at most 1 MiB", MaxSpecLine>>10)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
			return nil, invalidf("read job specs: %v", err)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// inOrder says whether order leaves a chunk as it was.
func inOrder(order []int) bool {
	for k, i := range order {
		if k != i {
			return false
		}
	}
	return true
}

// streamChunk is how many jobs of a stream go to the engine at a time.
const streamChunk = 1000

// EnqueueStream stores the jobs of seq in one transaction, as they come:
// all of them, or none when any is refused or seq yields an error (the
// error names the job's place). each gets the results of the stored jobs,
// in seq's order, before the transaction commits: what it shows must wait
// for EnqueueStream to return nil, and it must not keep the slice, whose
// memory serves the next results. A job may wait (after) on jobs stored
// before or on earlier jobs of seq. Memory stays bounded whatever seq's
// length. It returns how many jobs seq held.
func (s *Store) EnqueueStream(ctx context.Context, seq iter.Seq2[NewJob, error], each func([]Result) error) (int, error) {
	cfg, err := s.Config(ctx)
	if err != nil {
		return 0, err
	}
	var (
		total int   // jobs read
		order []int // the last chunk's order: rows[k] is chunk[order[k]]
		base  int   // the index in seq of the last chunk's first job
		fail  error // seq's own error, or a job newRow refused
	)
	chunks := func(yield func(EnqueueParams, error) bool) {
		chunk := make([]NewJob, 0, streamChunk)
		var rows []NewRow // reused: the engine keeps no row after its chunk
		flush := func() bool {
			base, order = total-len(chunk), nil
			if order, fail = orderAfter(chunk); fail != nil {
				yield(EnqueueParams{}, fail)
				return false
			}
			if cap(rows) < len(chunk) {
				rows = make([]NewRow, len(chunk))
			}
			rows = rows[:len(chunk)]
			for k, i := range order {
				if rows[k], fail = newRow(cfg, chunk[i], s.Now()); fail != nil {
					fail = fmt.Errorf("job %d: %w", base+i+1, fail)
					yield(EnqueueParams{}, fail)
					return false
				}
			}
			chunk = chunk[:0]
			return yield(EnqueueParams{Jobs: rows, Now: s.Now()}, nil)
		}
		for nj, err := range seq {
			if err != nil {
				fail = err
				yield(EnqueueParams{}, err)
				return
			}
			chunk, total = append(chunk, nj), total+1
			if len(chunk) == streamChunk && !flush() {
				return
			}
		}
		if len(chunk) > 0 {
			flush()
		}
	}
	err = s.engine.EnqueueStream(ctx, chunks, func(rs []Result) error {
		if inOrder(order) {
			return each(rs)
		}
		out := make([]Result, len(rs))
		for k, i := range order {
			out[i] = rs[k]
		}
		return each(out)
	})
	var at *AtError
	switch {
	case fail != nil:
		return total, fail
	case errors.As(err, &at):
		return total, fmt.Errorf("job %d: %w", base+order[at.Index]+1, at.Err)
	case err != nil:
		return total, err
	case total == 0:
		return 0, invalidf("no job spec given; give a JSON object, or one per line")
	}
	return total, nil
}

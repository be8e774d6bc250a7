package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// listed is one `list` run read to its end.
type listed struct {
	rows     int
	firstRow time.Duration // from start to the first line on stdout
	took     time.Duration // from start to exit
	peakMB   float64       // the process's peak resident set
}

// listAt runs `queuectl list` with args on home, reading its stdout as a
// terminal's pager would, and measures it.
func (b *Suite) listAt(ctx context.Context, home string, args ...string) (listed, error) {
	cmd, log, err := b.command(ctx, home, append([]string{"list"}, args...)...)
	if err != nil {
		return listed{}, err
	}
	defer log.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return listed{}, err
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return listed{}, fmt.Errorf("start queuectl: %w", err)
	}
	var l listed
	// The peak of this process alone: the rusage of a child counts the
	// parent's resident set at the fork too, and this bench is large.
	peak := make(chan float64, 1)
	stop := make(chan struct{})
	go func() {
		hwm := 0.0
		defer func() { peak <- hwm }()
		for {
			if _, h, err := memory(cmd.Process.Pid); err == nil {
				hwm = max(hwm, h)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	defer func() {
		if stop != nil {
			close(stop)
			<-peak
		}
	}()
	buf := make([]byte, 256<<10)
	for {
		n, err := out.Read(buf)
		if n > 0 && l.firstRow == 0 && bytes.IndexByte(buf[:n], '\n') >= 0 {
			l.firstRow = time.Since(began)
		}
		l.rows += bytes.Count(buf[:n], []byte{'\n'})
		if err == io.EOF {
			close(stop) // the process is at its end: its peak is in
			l.peakMB, stop = <-peak, nil
			break
		}
		if err != nil {
			cmd.Wait()
			return l, err
		}
	}
	if err := cmd.Wait(); err != nil {
		return l, fmt.Errorf("queuectl list %s: %w", strings.Join(args, " "), err)
	}
	l.took = time.Since(began)
	return l, nil
}

// lists: every job of the large store, as a table and as JSON, three
// times each: rows a second, the first row's delay and the peak memory.
func (b *Suite) lists(ctx context.Context, home string, total int) ([]Result, error) {
	var out []Result
	for _, form := range [][]string{nil, {"--json"}} {
		var rate, first, peak []float64
		for range 3 {
			l, err := b.listAt(ctx, home, form...)
			if err != nil {
				return out, err
			}
			rate = append(rate, perSecond(total, l.took))
			first = append(first, millis(l.firstRow))
			peak = append(peak, l.peakMB)
		}
		name := "list"
		if len(form) > 0 {
			name += " --json"
		}
		name = fmt.Sprintf("`%s` at %d jobs", name, total)
		out = append(out,
			atLeast(name+", rows", quantile(rate, 0.5), 250000, "250,000 rows/s", 1),
			atMost(name+", first row", quantile(first, 0.5), quantile(first, 0.99), "ms", 50, 0),
			atMost(name+", peak RSS", quantile(peak, 0.5), quantile(peak, 0.99), "MB", 64, 0))
	}
	return out, nil
}

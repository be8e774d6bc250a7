package run

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/termtext"
)

// lastLinesBytes bounds what LastLines reads: the end of a stream of any
// size, enough for a few lines of an error.
const lastLinesBytes = 8 << 10

// lineCells bounds each line LastLines returns: a line of a megabyte would
// bury what it is there to show.
const lineCells = 300

// LastLines returns the last n lines of the stream, from where Open reads
// it, without their newlines and as text to quote (termtext.Plain: no
// terminal escapes, a carriage return ends a line): at most the stream's
// last 8 KiB, each line cut at 300 bytes. A stream that printed nothing
// has none.
func (l Log) LastLines(n int) ([]string, error) {
	rc, _, err := l.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	partial := false // the read starts inside the stream
	if f, ok := rc.(*os.File); ok {
		fi, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("read log: %w", err)
		}
		if _, err := f.Seek(max(0, fi.Size()-lastLinesBytes), io.SeekStart); err != nil {
			return nil, fmt.Errorf("read log: %w", err)
		}
		partial = fi.Size() > lastLinesBytes
	}
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	if len(data) > lastLinesBytes {
		data, partial = data[len(data)-lastLinesBytes:], true
	}
	// As a terminal showed them: a progress bar's carriage returns end
	// lines (one starting a line starts none), escapes are gone.
	data = bytes.TrimLeft(bytes.ReplaceAll(data, []byte("\n\r"), []byte("\n")), "\r")
	lines := strings.Split(strings.TrimRight(termtext.Plain(string(data)), "\n"), "\n")
	if partial && len(lines) > 1 {
		lines = lines[1:] // the end of a line (or of an escape) cut off
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil, nil
	}
	lines = lines[max(0, len(lines)-n):]
	for i, s := range lines {
		if len(s) > lineCells {
			lines[i] = strings.ToValidUTF8(s[:lineCells], "") + "…"
		}
	}
	return lines, nil
}

// Printed says whether the stream printed anything, as far as this host
// can tell: a run still running on another host may yet, and is given the
// benefit of the doubt. One that printed nothing has no log file.
func (l Log) Printed() bool {
	if l.Elsewhere() && l.Run.Tails == nil {
		return true
	}
	return l.Size() > 0
}

// Size is how many bytes the stream printed, as far as this host can
// tell: the log file's size here, else the size kept with the run.
func (l Log) Size() int64 {
	if !l.Elsewhere() {
		if f, err := openLog(l.Path()); err == nil && f != nil {
			defer f.Close()
			if fi, err := f.Stat(); err == nil {
				return fi.Size()
			}
		}
	}
	if k := l.Kept(); k != nil {
		return k.Size
	}
	return 0
}

// LastStderrLine returns the last line of the stderr of job id's latest
// run, "" when it has none or printed nothing there: what the dead-letter
// lists show beside the error. It reads the log file where the run ran
// here, and the tail kept with the run otherwise (another host, a file
// removed).
func LastStderrLine(ctx context.Context, s *claim.Store, id string) (string, error) {
	runs, err := s.Runs(ctx, id)
	if err != nil || len(runs) == 0 {
		return "", err
	}
	lg := Log{Run: runs[len(runs)-1], Stderr: true}
	kept := lg.Kept() != nil && lg.Kept().Size > 0
	if kept && (lg.Elsewhere() || lg.Origin() == FromTail) {
		// Runs leaves the tails' bytes out: read them for this one.
		if runs, err = s.RunsWithTails(ctx, id); err != nil || len(runs) == 0 {
			return "", err
		}
		lg.Run = runs[len(runs)-1]
	}
	lines, err := lg.LastLines(1)
	if err != nil || len(lines) == 0 {
		return "", err
	}
	return lines[0], nil
}

// LastStderrLines is LastStderrLine of each of jobs, in their order.
func LastStderrLines(ctx context.Context, s *claim.Store, jobs []claim.Job) ([]string, error) {
	lines := make([]string, len(jobs))
	for i, j := range jobs {
		var err error
		if lines[i], err = LastStderrLine(ctx, s, j.ID); err != nil {
			return nil, err
		}
	}
	return lines, nil
}

// Text is the whole stream as Open reads it.
func (l Log) Text() (string, error) {
	rc, _, err := l.Open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return "", fmt.Errorf("read log: %w", err)
	}
	return string(b), nil
}

package run

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// lastLinesBytes bounds what LastLines reads: the end of a stream of any
// size, enough for a few lines of an error.
const lastLinesBytes = 8 << 10

// lineCells bounds each line LastLines returns: a line of a megabyte would
// bury what it is there to show.
const lineCells = 300

// LastLines returns the last n lines of the stream, from where Open reads
// it, without their newlines: at most the stream's last 8 KiB, each line
// cut at 300 bytes. A stream that printed nothing has none.
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
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if partial && len(lines) > 1 {
		lines = lines[1:] // the end of a line cut off
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil, nil
	}
	lines = lines[max(0, len(lines)-n):]
	for i, s := range lines {
		if len(s) > lineCells {
			lines[i] = strings.ToValidUTF8(s[:lineCells], "") + "…"
		}
		lines[i] = strings.TrimRight(lines[i], "\r")
	}
	return lines, nil
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

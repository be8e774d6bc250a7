package front

import (
	"io"
	"os"
)

// Lines is run's stderr for the job's (W), remembering whether its
// last write left a line open ("progress 50%"), so that a notice of run's
// on the same terminal starts on a line of its own (Break), as make's do.
// The job's stdout counts too where it goes where stderr goes (one
// terminal, 2>&1): a line it leaves open ("compiling... ") is the line a
// notice would be written on. Run's notices and the job's output are
// written from one goroutine.
type Lines struct {
	W    io.Writer // the job's stderr, as run writes it
	Raw  io.Writer // where the line is ended: run's stderr itself
	Open bool      // the last write left a line open
	// Shared reports whether the job's stdout is written where its stderr
	// is; asked only when a stdout line is open and stderr's is not.
	Shared func() bool
	last   bool // the last write of either stream left a line open
}

func (l *Lines) Write(p []byte) (int, error) {
	n, err := l.W.Write(p)
	if n > 0 {
		l.Open = p[n-1] != '\n'
		l.last = l.Open
	}
	return n, err
}

// Out tells of p, written of the job's stdout.
func (l *Lines) Out(p []byte) {
	if len(p) > 0 {
		l.last = p[len(p)-1] != '\n'
	}
}

// Left reports whether a notice written now would follow a line the job
// left open.
func (l *Lines) Left() bool {
	if l.Open == l.last {
		return l.Open
	}
	if l.Shared != nil && l.Shared() {
		return l.last
	}
	return l.Open
}

// Break ends the line the job's output left open, if any.
func (l *Lines) Break() {
	if l.Left() {
		l.Raw.Write([]byte("\n"))
	}
	l.Open, l.last = false, false
}

// SameFile reports whether out and err write to one file: one terminal,
// or one pipe or file (2>&1).
func SameFile(out, err io.Writer) bool {
	o, ok1 := out.(*os.File)
	e, ok2 := err.(*os.File)
	if !ok1 || !ok2 {
		return false
	}
	oi, err1 := o.Stat()
	ei, err2 := e.Stat()
	return err1 == nil && err2 == nil && os.SameFile(oi, ei)
}

// stdSame reports whether run's own stdout and stderr are one file.
func stdSame() bool { return SameFile(os.Stdout, os.Stderr) }

package front

import "io"

// Lines is run's stderr for the job's (W), remembering whether its
// last write left a line open ("progress 50%"), so that a notice of run's
// on the same terminal starts on a line of its own (Break), as make's do.
// Run's notices and the job's output are written from one goroutine.
type Lines struct {
	W    io.Writer // the job's stderr, as run writes it
	Raw  io.Writer // where the line is ended: run's stderr itself
	Open bool      // the last write left a line open
}

func (l *Lines) Write(p []byte) (int, error) {
	n, err := l.W.Write(p)
	if n > 0 {
		l.Open = p[n-1] != '\n'
	}
	return n, err
}

// Break ends the line the job's stderr left open, if any.
func (l *Lines) Break() {
	if l.Open {
		l.Open = false
		l.Raw.Write([]byte("\n"))
	}
}

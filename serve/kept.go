package serve

import (
	"context"
	"os"
	"strconv"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
)

// A run's log files stay on the host that ran it; the store keeps the last
// claim.TailBytes of each stream with the run (SPEC §9). The pages and the
// API show that tail where the file cannot be read here: the run ran on
// another host (whose files are never looked for here: a file of the same
// name belongs to another run), or its file is gone (removed by hand).

// keptLog is where one stream of a run is read from: the file in this
// home's logs/, or (Tail set) the tail kept with the run.
type keptLog struct {
	File *os.File    // nil: no file (or Tail)
	Tail *claim.Tail // the kept tail to show instead of a file; nil: the file
	// Elsewhere: the run ran on another host, whose files are not read
	// here; Tail is nil until it ends (or when it was lost there).
	Elsewhere bool
}

// tailOf is the kept tail of one stream of r, nil when none was kept.
func tailOf(r claim.Run, stream string) *claim.Tail {
	switch {
	case r.Tails == nil:
		return nil
	case stream == "stderr":
		return &r.Tails.Stderr
	}
	return &r.Tails.Stdout
}

// where names a stream's full log file for people: host:path.
func where(r claim.Run, stream string) string {
	if stream == "stderr" {
		return r.HostName() + ":" + r.StderrPath
	}
	return r.HostName() + ":" + r.StdoutPath
}

// openRunLog opens one stream of run r (from Runs, without the tails'
// bytes): the file here, or the tail kept with it, whose bytes it reads
// then. The caller closes File.
func (s *Server) openRunLog(ctx context.Context, r claim.Run, stream string) (keptLog, error) {
	if r.Host != s.host {
		l := keptLog{Elsewhere: true}
		if t := tailOf(r, stream); t != nil && t.Size == 0 {
			return keptLog{}, nil // printed nothing: no file there, as here
		}
		if tailOf(r, stream) != nil {
			t, err := s.keptTail(ctx, r, stream)
			l.Tail = t
			return l, err
		}
		return l, nil
	}
	f, err := s.openLog(r.JobID, r.Attempt, stream)
	if err != nil || f != nil {
		return keptLog{File: f}, err
	}
	if t := tailOf(r, stream); t != nil && t.Size > 0 { // the file was removed since
		t, err := s.keptTail(ctx, r, stream)
		return keptLog{Tail: t}, err
	}
	return keptLog{}, nil
}

// keptTail reads the bytes of a run's kept tail: r's own, when r was read
// with them (RunsWithTails), else the store's.
func (s *Server) keptTail(ctx context.Context, r claim.Run, stream string) (*claim.Tail, error) {
	if t := tailOf(r, stream); t != nil && len(t.Data) > 0 {
		return t, nil
	}
	runs, err := s.store.RunsWithTails(ctx, r.JobID)
	if err != nil {
		return nil, err
	}
	for _, got := range runs {
		if got.Attempt == r.Attempt {
			return tailOf(got, stream), nil
		}
	}
	return nil, nil
}

// fromTail says whether a stream of r (with its tails' bytes) is shown
// from the tail kept with it, for the API's `show --json`.
func (s *Server) fromTail(r claim.Run, stderr bool) bool {
	stream := "stdout"
	if stderr {
		stream = "stderr"
	}
	t := tailOf(r, stream)
	if r.Host != s.host {
		return t != nil && t.Size > 0 // one that printed nothing made no file there
	}
	if t == nil || t.Size == 0 {
		return false
	}
	f, err := s.openLog(r.JobID, r.Attempt, stream)
	if f != nil {
		f.Close()
	}
	return f == nil && err == nil
}

// keptNote says, above a log shown from its kept tail or not shown at
// all, what it is and where the full file is; "" for a file here.
func keptNote(r claim.Run, stream string, l keptLog) string {
	switch {
	case l.Tail != nil && l.Elsewhere:
		return "Run " + strconv.Itoa(r.Attempt) + " ran on " + r.HostName() + ": showing " + report.KeptText(*l.Tail) +
			" of its " + stream + ", kept with the run. The full log is " + where(r, stream) + "."
	case l.Tail != nil:
		return "The log file is gone: showing " + report.KeptText(*l.Tail) + " of it, kept with the run."
	case l.Elsewhere && r.EndedAt.IsZero():
		return "Run " + strconv.Itoa(r.Attempt) + " runs on " + r.HostName() + ", in " + where(r, stream) +
			": the last " + report.Bytes(claim.TailBytes) + " show here when it ends."
	case l.Elsewhere:
		return "Run " + strconv.Itoa(r.Attempt) + " ran on " + r.HostName() + ", which kept none of its " + stream +
			": if it printed any, it is in " + where(r, stream) + "."
	}
	return ""
}

package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/termtext"
	"github.com/queuectl/queuectl/report"
)

type runRow struct {
	claim.Run
	Outcome  string // "running" while it runs
	Started  string
	Ended    string
	Duration string
	Selected bool
}

type jobView struct {
	Job     claim.Job
	Fields  []report.Field
	Runs    []runRow
	Actions []action
	// The log shown: which run and stream, its text (the last logTail
	// bytes), and where the file ended, for the live view to go on from.
	Attempt int
	Stream  string
	Log     string
	LogCut  bool
	LogEnd  int64
	// LogNote says, where the log is not this home's file, what is shown
	// instead: the tail kept with the run, and where the full file is.
	LogNote   string
	Live      bool // the shown run is still running
	Follow    bool // the page follows the job (events) until it is finished
	EventsURL string
}

func (v jobView) title() string { return "Job " + v.Job.ID }
func (v jobView) api() string   { return "/api/v1/jobs/" + url.PathEscape(v.Job.ID) }

// logTail is how much of a log the job page shows; the full log is a link.
const logTail = 256 << 10

// jobPage shows every field of a job, every run, and one run's stdout or
// stderr (?attempt=N&stream=stderr; the latest run's stdout by default).
func (s *Server) jobPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	j, runs, err := s.job(ctx, r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	q := r.URL.Query()
	v := jobView{Job: j, Stream: "stdout", Attempt: len(runs)}
	if q.Get("stream") == "stderr" || (q.Get("stream") == "" && opensOnStderr(j, runs)) {
		v.Stream = "stderr"
	}
	if a := q.Get("attempt"); a != "" {
		// As the log endpoint does: a run the job does not have is no
		// page, rather than the last run shown as if it were that one.
		n, err := strconv.Atoi(a)
		switch {
		case err != nil:
			err = usagef("attempt %q is not a number", a)
		case n < 1 || n > len(runs):
			err = noRunError{j.ID, n, len(runs)}
		}
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		v.Attempt = n
	}
	p := s.printer()
	for _, f := range p.JobFields(j) {
		if f.Key != "command" { // shown whole, above the fields
			v.Fields = append(v.Fields, f)
		}
	}
	for _, run := range runs {
		row := runRow{Run: run, Outcome: run.Outcome, Started: p.When(run.StartedAt), Ended: p.Age(run.EndedAt),
			Duration: p.RunDuration(run), Selected: run.Attempt == v.Attempt}
		if row.Outcome == "" {
			row.Outcome = "running"
		}
		v.Runs = append(v.Runs, row)
	}
	if v.Attempt > 0 {
		shown := runs[v.Attempt-1]
		l, err := s.openRunLog(ctx, shown, v.Stream)
		var refused *logRefused
		if errors.As(err, &refused) {
			v.LogNote, err = refused.Error(), nil
		}
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		if v.LogNote == "" {
			v.LogNote = keptNote(shown, v.Stream, l)
		}
		if l.Tail != nil {
			v.Log, v.LogEnd = string(l.Tail.Data), l.Tail.Size
		} else {
			v.Log, v.LogEnd, v.LogCut, err = tail(l.File, logTail)
		}
		v.Log = termtext.Plain(v.Log)
		if l.File != nil {
			l.File.Close()
		}
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		v.Live = shown.EndedAt.IsZero()
		v.EventsURL = fmt.Sprintf("/jobs/%s/events?%s", url.PathEscape(j.ID), url.Values{
			"attempt": {strconv.Itoa(v.Attempt)}, "stream": {v.Stream}, "offset": {strconv.FormatInt(v.LogEnd, 10)}}.Encode())
	} else {
		v.EventsURL = "/jobs/" + url.PathEscape(j.ID) + "/events"
	}
	v.Follow = v.Live || !j.State.Finished()
	v.Actions = s.actionsFor(j)
	s.render(w, r, http.StatusOK, "job", v)
}

// opensOnStderr reports whether the job page shows stderr unless asked:
// for a failed or dead job, whose reason is mostly there, unless its
// latest run printed nothing there and something on stdout.
func opensOnStderr(j claim.Job, runs []claim.Run) bool {
	if (j.State != claim.Failed && j.State != claim.Dead) || len(runs) == 0 {
		return false
	}
	t := runs[len(runs)-1].Tails
	return t == nil || t.Stderr.Size > 0 || t.Stdout.Size == 0
}

// jobState is what the job page's script compares to decide to reload.
type jobState struct {
	State    claim.State `json:"state"`
	RunCount int         `json:"run_count"`
	Updated  string      `json:"updated_at"`
}

// jobEvents streams a job's changes as Server-Sent Events, for the job
// page's script: "log" events carry new output of the run being shown (a
// JSON string), "state" events the job's state whenever it changes, and
// "end" says nothing more will happen: the shown run is over and the job
// finished. The page reads fine without them.
func (s *Server) jobEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q := r.URL.Query()
	attempt, _ := strconv.Atoi(q.Get("attempt"))
	offset, _ := strconv.ParseInt(q.Get("offset"), 10, 64)
	stream := q.Get("stream")
	if stream == "" {
		stream = "stdout"
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, http.StatusInternalServerError, fmt.Errorf("streaming unsupported"), "")
		return
	}
	j, err := s.get(r.Context(), id)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	id = j.ID // a prefix or @last names the job once, not again at each round
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	var last jobState
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		over, err := s.sendEvents(r.Context(), w, id, attempt, stream, &offset, &last)
		if err != nil || over {
			return
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		case <-tick.C:
		}
	}
}

// sendEvents writes one round of events; over reports that the stream is
// done (the run ended, the job is gone, or the client left).
func (s *Server) sendEvents(ctx context.Context, w io.Writer, id string, attempt int, stream string, offset *int64, last *jobState) (over bool, err error) {
	j, runs, err := s.job(ctx, id)
	if err != nil {
		return true, writeEvent(w, "end", err.Error())
	}
	st := jobState{State: j.State, RunCount: j.Runs, Updated: j.UpdatedAt.Format(time.RFC3339Nano)}
	ended := false
	if attempt >= 1 && attempt <= len(runs) {
		ended = !runs[attempt-1].EndedAt.IsZero()
		// Another host's run is not followed: its files are there, and
		// the page shows its kept tail once it ends.
		if runs[attempt-1].Host == s.host {
			if err := s.sendLog(w, id, attempt, stream, offset); err != nil {
				return true, err
			}
		}
	}
	if st != *last {
		*last = st
		if err := writeEvent(w, "state", st); err != nil {
			return true, err
		}
	}
	if (attempt == 0 || ended) && j.State.Finished() {
		return true, writeEvent(w, "end", st)
	}
	return false, nil
}

// sendLog sends what the log gained since offset, in pieces of at most
// 64 KiB without terminal escapes (termtext.Plain), and moves offset past it.
func (s *Server) sendLog(w io.Writer, id string, attempt int, stream string, offset *int64) error {
	f, err := s.openLog(id, attempt, stream)
	if err != nil || f == nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := f.ReadAt(buf, *offset)
		full := err == nil && n == len(buf)
		if full {
			n = runeStart(buf[:n]) // the rest of a split character comes next time
		}
		n = escapeCut(buf[:n]) // and of an escape sequence
		if n > 0 {
			*offset += int64(n)
			if err := writeEvent(w, "log", termtext.Plain(string(buf[:n]))); err != nil {
				return err
			}
		}
		if !full {
			return nil
		}
	}
}

// writeEvent writes one SSE event whose data is v as JSON: one line, so no
// newline in a log can end the event early.
func writeEvent(w io.Writer, event string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	return err
}

// runeStart returns how much of b ends on a whole UTF-8 character: a piece
// of a log cut in the middle of one would show as U+FFFD.
func runeStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			if i == 0 {
				return len(b) // no character starts here: send it as it is
			}
			return i
		}
	}
	return len(b)
}

package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// streamExt maps the URL's stream name to the log file's extension.
var streamExt = map[string]string{"stdout": ".out", "stderr": ".err"}

// openLog opens the log of run attempt of job id, from the home's logs/
// directory only: the path is built from the id (a valid job id names no
// other directory) and the attempt number, never read from the store, and
// neither the job's directory nor the file may be a symlink or anything but
// a regular file (a *logRefused error). A log not written yet is (nil,
// nil): an empty log. Errors name the log by its place in the home, never
// by the home's path, which is no business of whoever reads the page.
func (s *Server) openLog(id string, attempt int, stream string) (*os.File, error) {
	ext, ok := streamExt[stream]
	if !ok || !claim.ValidID(id) || attempt < 1 {
		return nil, usagef("no log %s of attempt %d of job %q: streams are stdout and stderr", stream, attempt, id)
	}
	for _, rel := range []string{"logs", "logs/" + id} {
		fi, err := os.Lstat(filepath.Join(s.home, rel))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, pathless(err, rel)
		}
		if !fi.IsDir() {
			return nil, &logRefused{rel, "is not a directory (a symlink?)"}
		}
	}
	rel := "logs/" + id + "/" + strconv.Itoa(attempt) + ext
	f, err := os.OpenFile(filepath.Join(s.logs, id, strconv.Itoa(attempt)+ext), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, &logRefused{rel, "is a symlink"}
	}
	if err != nil {
		return nil, pathless(err, rel)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &logRefused{rel, "is not a regular file"}
	}
	return f, nil
}

// logRefused is a log that is not served, named by its place in the home.
type logRefused struct{ rel, why string }

func (e *logRefused) Error() string {
	return e.rel + " " + e.why + ": logs are shown only from regular files in the home's logs/"
}

// pathless is err about the file at rel in the home, without its path.
func pathless(err error, rel string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("read %s: %w", rel, err)
}

// runLog serves one run's stdout or stderr as plain text, streamed from the
// file, with nosniff (set for every response) so that no browser renders a
// log that looks like HTML.
func (s *Server) runLog(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	id := r.PathValue("id")
	attempt, err := strconv.Atoi(r.PathValue("attempt"))
	if err != nil || attempt < 1 {
		s.failErr(w, r, usagef("attempt %q is not a run number (from 1)", r.PathValue("attempt")))
		return
	}
	run, err := s.run(ctx, id, attempt)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	stream := r.PathValue("stream")
	if _, ok := streamExt[stream]; !ok {
		s.failErr(w, r, usagef("no log %s of attempt %d of job %q: streams are stdout and stderr", stream, attempt, id))
		return
	}
	l, err := s.openRunLog(ctx, run, stream)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if l.Tail != nil || l.Elsewhere {
		// Not this home's file: the headers say what is served instead,
		// and where the full file is.
		w.Header().Set("Queuectl-Log-File", where(run, stream))
	}
	if l.Tail != nil {
		w.Header().Set("Queuectl-Log-Kept", strconv.FormatInt(l.Tail.Size, 10))
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(l.Tail.Data))
		return
	}
	if l.File == nil {
		return
	}
	defer l.File.Close()
	// ServeContent honours Range (resume a download, read a long log's
	// end) and serves the file as long as it was when asked.
	http.ServeContent(w, r, "", time.Time{}, l.File)
}

// logText is the whole of a run's stream as runLog serves it; "" when it
// printed nothing, or has no file here and no tail kept.
func (s *Server) logText(ctx context.Context, r claim.Run, stream string) (string, error) {
	l, err := s.openRunLog(ctx, r, stream)
	switch {
	case err != nil:
		return "", err
	case l.Tail != nil:
		return string(l.Tail.Data), nil
	case l.File == nil:
		return "", nil
	}
	defer l.File.Close()
	b, err := io.ReadAll(l.File)
	if err != nil {
		return "", pathless(err, "logs/"+r.JobID+"/"+strconv.Itoa(r.Attempt)+streamExt[stream])
	}
	return string(b), nil
}

// run finds run attempt of job id: ErrNotFound for either.
func (s *Server) run(ctx context.Context, id string, attempt int) (claim.Run, error) {
	_, runs, err := s.job(ctx, id)
	if err != nil {
		return claim.Run{}, err
	}
	if attempt < 1 || attempt > len(runs) {
		return claim.Run{}, noRunError{id, attempt, len(runs)}
	}
	return runs[attempt-1], nil
}

// noRunError is the ErrNotFound of a run a job that exists does not have:
// it says so without "no such job", and its hint names the job's runs.
type noRunError struct {
	id            string
	attempt, runs int
}

func (e noRunError) Error() string {
	return fmt.Sprintf("job %s has no run %d (it has %d)", e.id, e.attempt, e.runs)
}

func (e noRunError) Is(target error) bool { return target == claim.ErrNotFound }

// tail reads at most limit bytes from the end of f, and the offset where the
// file ended, for the page to show a long log's end and follow it from there.
func tail(f *os.File, limit int64) (text string, end int64, cut bool, err error) {
	if f == nil {
		return "", 0, false, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return "", 0, false, err
	}
	end = fi.Size()
	start := max(0, end-limit)
	buf := make([]byte, end-start)
	n, err := f.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", 0, false, err
	}
	return string(buf[:n]), start + int64(n), start > 0, nil
}

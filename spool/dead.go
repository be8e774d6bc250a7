package spool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// deadFile is dead/<id>.json: the job spec, valid to drop back into the
// spool (only the fields of SPEC §3), plus the "dead" object that
// claim.ParseSpec accepts and reads as a request to re-drive. Its "after"
// is left out: the re-drive is of the job itself, which keeps what it
// waits for (a job that died with one is re-armed by re-driving that one,
// and its file refused until then), and in another home those ids would
// name nothing.
type deadFile struct {
	ID          string            `json:"id"`
	Command     string            `json:"command"`
	MaxRetries  int               `json:"max_retries"`
	BackoffBase int               `json:"backoff_base"`
	Priority    int               `json:"priority"`
	Queue       string            `json:"queue,omitempty"`
	RunAt       string            `json:"run_at,omitempty"`
	Timeout     string            `json:"timeout,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Cwd         string            `json:"cwd,omitempty"`
	UniqueKey   string            `json:"unique_key,omitempty"`
	Label       string            `json:"label,omitempty"`
	claim.Hooks                   // on_success, on_failure, on_dead
	Limits      *claim.Limits     `json:"limits,omitempty"`
	Dead        deadInfo          `json:"dead"`
}

type deadInfo struct {
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error"`
	ExitCode  *int      `json:"exit_code"`
	DiedAt    string    `json:"died_at"`
	Logs      []deadLog `json:"logs"`
}

// deadLog is a run's log files: a stream that printed nothing has none
// (SPEC §2).
type deadLog struct {
	Attempt int    `json:"attempt"`
	Stdout  string `json:"stdout,omitempty"`
	Stderr  string `json:"stderr,omitempty"`
}

// logOf returns the path of one of r's log files when it holds something:
// as found here for a run of this host; for a run of another host, whose
// files are there, unless the tail kept with it says it printed nothing,
// after that host's name ("web2:/var/lib/…"), as show names it: the bare
// path would name a file of the host that reads it.
func logOf(r claim.Run, stderr bool) string {
	path, kept := r.StdoutPath, (*claim.Tail)(nil)
	if stderr {
		path = r.StderrPath
	}
	if r.Host != claim.HostID() {
		if r.Tails != nil {
			kept = &r.Tails.Stdout
			if stderr {
				kept = &r.Tails.Stderr
			}
		}
		if kept != nil && kept.Size == 0 {
			return ""
		}
		return r.HostName() + ":" + path
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		return path
	}
	return ""
}

func newDeadFile(j claim.Job, runs []claim.Run) deadFile {
	f := deadFile{ID: j.ID, Command: j.Command, MaxRetries: j.MaxRetries, BackoffBase: j.BackoffBase,
		Priority: j.Priority, Queue: j.Queue, Env: claim.EscapeEnv(j.Env), Cwd: j.Cwd, UniqueKey: j.UniqueKey,
		Label: j.Label, Hooks: j.Hooks,
		Dead: deadInfo{Attempts: j.Attempts, LastError: j.LastError, ExitCode: j.ExitCode, Logs: []deadLog{}}}
	if !j.Limits.IsZero() {
		f.Limits = &j.Limits
	}
	if !j.RunAt.IsZero() {
		f.RunAt = j.RunAt.UTC().Format(time.RFC3339)
	}
	if j.Timeout > 0 {
		f.Timeout = j.Timeout.String()
	}
	died := j.FinishedAt
	if died.IsZero() {
		died = j.UpdatedAt
	}
	f.Dead.DiedAt = died.UTC().Format(time.RFC3339)
	for _, r := range runs {
		f.Dead.Logs = append(f.Dead.Logs, deadLog{Attempt: r.Attempt, Stdout: logOf(r, false), Stderr: logOf(r, true)})
	}
	return f
}

// WriteDead writes dir/<id>.json for the dead job j, with its runs' log
// paths, atomically: a temporary file is written and fsync'd, renamed over
// the old one, and the directory fsync'd. Readers never see half a file.
func WriteDead(dir string, j claim.Job, runs []claim.Run) error {
	if !claim.ValidID(j.ID) {
		return fmt.Errorf("write dead file: invalid job id %q", j.ID)
	}
	// Plain JSON: a command's > and & stay as written, not \u003e.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(newDeadFile(j, runs)); err != nil {
		return fmt.Errorf("write dead file for %s: %w", j.ID, err)
	}
	tmp, err := os.CreateTemp(dir, "."+j.ID+".json.*.tmp")
	if err != nil {
		return fmt.Errorf("write dead file for %s: %w", j.ID, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, there is nothing to remove
	_, err = tmp.Write(buf.Bytes())
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && !j.UpdatedAt.IsZero() {
		// The file's time is the job's as written (stale, SyncDead).
		err = os.Chtimes(tmp.Name(), time.Time{}, j.UpdatedAt)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), deadPath(dir, j.ID))
	}
	if err != nil {
		return fmt.Errorf("write dead file for %s: %w", j.ID, err)
	}
	return syncDir(dir)
}

// RemoveDead removes dir/<id>.json, for `dlq retry` and `dlq purge`. A
// missing file is no error.
func RemoveDead(dir, id string) error {
	if !claim.ValidID(id) {
		return fmt.Errorf("remove dead file: invalid job id %q", id)
	}
	if err := os.Remove(deadPath(dir, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove dead file: %w", err)
	}
	return nil
}

func deadPath(dir, id string) string { return filepath.Join(dir, id+".json") }

// staleTemp is how old a temporary file of WriteDead must be before
// SyncDead takes its writer for dead.
const staleTemp = time.Minute

// SyncDead makes dir agree with the store after a crash anywhere: it writes
// the missing file of every dead job, writes again the file of one changed
// since its file was written (stale), and removes the files of jobs that
// are no longer dead or are gone. Files that are not dead files (another
// name, or without a "dead" object) are left alone. Run it at start, before
// workers run jobs; it is safe, but may race, while they do.
func SyncDead(ctx context.Context, s *claim.Store, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("sync dead files: %w", err)
	}
	// Files are listed before jobs: a job that dies in between then has no
	// file in the listing and is written, never removed.
	files, err := deadFiles(dir)
	if err != nil {
		return err
	}
	dead, err := s.List(ctx, claim.Filter{State: claim.Dead})
	if err != nil {
		return fmt.Errorf("sync dead files: %w", err)
	}
	var errs []error
	isDead := make(map[string]bool, len(dead))
	for _, j := range dead {
		isDead[j.ID] = true
		if written, ok := files[j.ID]; ok && !stale(written, j.UpdatedAt) {
			continue
		}
		runs, err := s.Runs(ctx, j.ID)
		if err == nil {
			err = WriteDead(dir, j, runs)
		}
		errs = append(errs, err)
	}
	for id := range files {
		if isDead[id] || !isDeadFile(dir, id) {
			continue
		}
		if j, err := s.Get(ctx, id); err == nil && j.State == claim.Dead {
			continue // died since the listing
		}
		errs = append(errs, RemoveDead(dir, id))
	}
	return errors.Join(errs...)
}

// stale reports whether a dead file whose time is written holds a job
// changed since, at updated (a dependent left dead by a re-drive, whose
// error now says why; an edit): WriteDead gives the file the job's time.
// A file system that keeps whole seconds (its times have no nanoseconds)
// is compared in seconds, or every sync would write the file again.
func stale(written, updated time.Time) bool {
	if written.Nanosecond() == 0 {
		return updated.Truncate(time.Second).After(written)
	}
	return updated.After(written)
}

// deadFiles returns the ids of the <id>.json files in dir, with the time
// of each, and removes the temporary files of writers that died.
func deadFiles(dir string) (map[string]time.Time, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sync dead files: %w", err)
	}
	ids := make(map[string]time.Time, len(entries))
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp") {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTemp {
				os.Remove(filepath.Join(dir, name))
			}
			continue
		}
		if id, ok := strings.CutSuffix(name, ".json"); ok && claim.ValidID(id) && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				ids[id] = fi.ModTime()
			}
		}
	}
	return ids, nil
}

// isDeadFile reports whether dir/<id>.json is a dead file of job id, so
// that SyncDead never removes a file a user keeps there for other reasons.
func isDeadFile(dir, id string) bool {
	data, err := os.ReadFile(deadPath(dir, id))
	if err != nil || len(data) > MaxSize {
		return false
	}
	var f struct {
		ID   string          `json:"id"`
		Dead json.RawMessage `json:"dead"`
	}
	return json.Unmarshal(data, &f) == nil && f.ID == id && len(f.Dead) > 0 && string(f.Dead) != "null"
}

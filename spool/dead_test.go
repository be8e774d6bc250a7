package spool

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// mustKill enqueues job id with one run allowed and fails that run, so the
// job is dead.
func mustKill(t *testing.T, s *claim.Store, id string) (claim.Job, []claim.Run) {
	t.Helper()
	ctx := context.Background()
	one := 1
	timeout := 90 * time.Second
	_, err := s.Enqueue(ctx, claim.NewJob{ID: id, Command: "echo x >&2 && exit 3", MaxRetries: &one, Priority: 7,
		Queue: "nightly", Env: map[string]string{"A": "b"}, Timeout: &timeout, UniqueKey: "k-" + id,
		Label: "nightly " + id, Hooks: claim.Hooks{OnFailure: "echo failed", OnDead: "echo dead"},
		Limits: claim.Limits{Memory: 1 << 30, NoFile: 256}})
	if err != nil {
		t.Fatal(err)
	}
	j, r, err := s.Claim(ctx, claim.Claimant{WorkerID: "w1", Host: "h", PID: 1, Lease: time.Minute, LogDir: "/logs"})
	if err != nil || j.ID != id {
		t.Fatalf("Claim = %s, %v; want %s", j.ID, err, id)
	}
	code := 3
	if st, err := s.Fail(ctx, j, r, &code, "exit status 3", time.Hour); err != nil || st != claim.Dead {
		t.Fatalf("Fail = %s, %v; want dead", st, err)
	}
	j, err = s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return j, runs
}

func TestWriteDead(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	j, runs := mustKill(t, s, "flaky")
	// The run, of this host, printed to stderr only: stdout has no file
	// to name.
	logs := t.TempDir()
	runs[0].Host = claim.HostID()
	runs[0].StdoutPath, runs[0].StderrPath = filepath.Join(logs, "1.out"), filepath.Join(logs, "1.err")
	if err := os.WriteFile(runs[0].StderrPath, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteDead(dir, j, runs); err != nil {
		t.Fatal(err)
	}
	if err := WriteDead(dir, j, runs); err != nil { // over an existing file
		t.Fatal(err)
	}
	if names, _ := listNames(dir); len(names) != 1 || names[0] != "flaky.json" {
		t.Fatalf("dead dir holds %v, want only flaky.json", names)
	}
	path := filepath.Join(dir, "flaky.json")
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
	data := mustRead(t, path)
	if !strings.Contains(string(data), `"command": "echo x >&2 && exit 3"`) {
		t.Errorf("dead file does not hold the command as written (plain JSON, no \\u003e):\n%s", data)
	}
	var f deadFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	d := f.Dead
	if d.Attempts != 1 || d.LastError != "exit status 3" || d.ExitCode == nil || *d.ExitCode != 3 ||
		d.DiedAt == "" || len(d.Logs) != 1 || d.Logs[0].Stdout != "" || d.Logs[0].Stderr != runs[0].StderrPath {
		t.Errorf("dead = %+v", d)
	}
	if _, err := time.Parse(time.RFC3339, d.DiedAt); err != nil || d.DiedAt[len(d.DiedAt)-1] != 'Z' {
		t.Errorf("died_at = %q, want RFC 3339 UTC", d.DiedAt)
	}
	// Valid to drop back into the spool: the same job, marked for re-drive.
	nj, err := Parse("flaky.json", data)
	if err != nil {
		t.Fatalf("Parse(dead file) = %v", err)
	}
	if nj.ID != "flaky" || nj.Command != "echo x >&2 && exit 3" || *nj.MaxRetries != 1 || nj.Priority != 7 || nj.Queue != "nightly" ||
		nj.Env["A"] != "b" || *nj.Timeout != 90*time.Second || nj.UniqueKey != "k-flaky" || !nj.Redrive ||
		nj.Label != "nightly flaky" || nj.Hooks != j.Hooks || nj.Limits != j.Limits {
		t.Errorf("Parse(dead file) = %+v", nj)
	}
}

func TestRemoveDead(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.json"), []byte("{}"), 0o600)
	if err := RemoveDead(dir, "x"); err != nil || exists(filepath.Join(dir, "x.json")) {
		t.Fatalf("RemoveDead(x) = %v, file there %v", err, exists(filepath.Join(dir, "x.json")))
	}
	if err := RemoveDead(dir, "x"); err != nil {
		t.Fatalf("RemoveDead(missing) = %v, want nil", err)
	}
	if err := RemoveDead(dir, "../x"); err == nil {
		t.Fatal("RemoveDead(../x) = nil, want an error")
	}
}

func TestSyncDead(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	dir := t.TempDir()
	mustKill(t, s, "missing") // dead, no file: written
	kept, runs := mustKill(t, s, "kept")
	retried, rruns := mustKill(t, s, "retried")
	purged, pruns := mustKill(t, s, "purged")
	for _, d := range []struct {
		j    claim.Job
		runs []claim.Run
	}{{kept, runs}, {retried, rruns}, {purged, pruns}} {
		if err := WriteDead(dir, d.j, d.runs); err != nil {
			t.Fatal(err)
		}
	}
	// A crash after the commit, before the file was dealt with:
	if _, err := s.Retry(ctx, "retried"); err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(ctx, "purged"); err != nil {
		t.Fatal(err)
	}
	// Files that are not dead files are left alone; stale temporaries go.
	os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"todo": 1}`), 0o600)
	os.WriteFile(filepath.Join(dir, "README"), []byte("hi"), 0o600)
	stale := filepath.Join(dir, ".x.json.123.tmp")
	os.WriteFile(stale, []byte("{"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)
	fresh := filepath.Join(dir, ".y.json.456.tmp")
	os.WriteFile(fresh, []byte("{"), 0o600)

	if err := SyncDead(ctx, s, dir); err != nil {
		t.Fatal(err)
	}
	names, _ := listNames(dir)
	got := map[string]bool{}
	for _, n := range names {
		got[n] = true
	}
	want := []string{"missing.json", "kept.json", "notes.json", "README", ".y.json.456.tmp"}
	for _, n := range want {
		if !got[n] {
			t.Errorf("%s is gone, want it kept", n)
		}
	}
	if len(names) != len(want) {
		t.Errorf("dead dir holds %v, want %v", names, want)
	}
	if _, err := Parse("missing.json", mustRead(t, filepath.Join(dir, "missing.json"))); err != nil {
		t.Errorf("written file does not parse: %v", err)
	}
}

// A dead/ file moved back into the spool re-drives its job; a copied one
// too, and the dead/ original is removed. Dropped again while the job is
// pending, it makes no second job (here a unique_key skip).
func TestDeadFileRedrives(t *testing.T) {
	for _, how := range []string{"mv", "cp"} {
		t.Run(how, func(t *testing.T) {
			w := newWatcher(t)
			ctx := context.Background()
			j, runs := mustKill(t, w.Store, "flaky")
			if err := WriteDead(w.Dirs.Dead, j, runs); err != nil {
				t.Fatal(err)
			}
			deadPath := filepath.Join(w.Dirs.Dead, "flaky.json")
			data := mustRead(t, deadPath)
			if how == "mv" {
				if err := os.Rename(deadPath, filepath.Join(w.Dirs.Spool, "flaky.json")); err != nil {
					t.Fatal(err)
				}
			} else {
				drop(t, w.Dirs.Spool, "flaky.json", string(data))
			}
			start(t, w)
			eventually(t, 10*time.Second, "re-drive", func() bool {
				j, err := w.Store.Get(ctx, "flaky")
				return err == nil && j.State == claim.Pending
			})
			j, _ = w.Store.Get(ctx, "flaky")
			if j.Attempts != 0 || j.Command != "echo x >&2 && exit 3" {
				t.Errorf("re-driven job = %+v, want attempts 0", j)
			}
			eventually(t, 10*time.Second, "dead file and spool file gone", func() bool {
				return !exists(deadPath) && !exists(filepath.Join(w.Dirs.Spool, "flaky.json"))
			})
			drop(t, w.Dirs.Spool, "flaky.json", string(data))
			eventually(t, 10*time.Second, "second drop dealt with", func() bool {
				return !exists(filepath.Join(w.Dirs.Spool, "flaky.json"))
			})
			if n := len(jobs(t, w.Store)); n != 1 {
				t.Errorf("%d jobs, want 1", n)
			}
		})
	}
}

// TestDeadFileOfARedrivenJob: a dead/ file dropped again once its job was
// re-driven (here without its unique_key, so that it is no skip) is
// rejected, and its reason says the job was re-driven already: the fix is
// not another "id", which would make a second job that runs the command
// again.
func TestDeadFileOfARedrivenJob(t *testing.T) {
	w := newWatcher(t)
	ctx := context.Background()
	j, runs := mustKill(t, w.Store, "flaky")
	if err := WriteDead(w.Dirs.Dead, j, runs); err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := json.Unmarshal(mustRead(t, filepath.Join(w.Dirs.Dead, "flaky.json")), &spec); err != nil {
		t.Fatal(err)
	}
	delete(spec, "unique_key")
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	drop(t, w.Dirs.Spool, "a.json", string(data))
	if st, err := w.Pass(ctx); err != nil || st.Redriven != 1 {
		t.Fatalf("Pass = %+v, %v; want the job re-driven", st, err)
	}
	drop(t, w.Dirs.Spool, "b.json", string(data))
	if st, err := w.Pass(ctx); err != nil || st.Rejected != 1 {
		t.Fatalf("Pass = %+v, %v; want the second copy rejected", st, err)
	}
	reason := string(mustRead(t, filepath.Join(w.Dirs.Rejected, "b.json"+reasonExt)))
	if !strings.Contains(reason, "job flaky is pending, not dead") || !strings.Contains(reason, "re-driven already") ||
		strings.Contains(reason, `another "id"`) {
		t.Errorf("reason:\n%s\nwant that flaky is pending, re-driven already, and no new id as the fix", reason)
	}
	if n := len(jobs(t, w.Store)); n != 1 {
		t.Errorf("%d jobs, want 1", n)
	}
}

// TestDeadLogsOfAnotherHost: a run of another host names its log files,
// which are there, after that host's name, but a stream its kept tail
// says printed nothing.
func TestDeadLogsOfAnotherHost(t *testing.T) {
	r := claim.Run{Attempt: 1, Host: "elsewhere/0000", StdoutPath: "/logs/j/1.out", StderrPath: "/logs/j/1.err"}
	f := newDeadFile(claim.Job{ID: "j", Command: "true"}, []claim.Run{r})
	if l := f.Dead.Logs[0]; l.Stdout != "elsewhere:"+r.StdoutPath || l.Stderr != "elsewhere:"+r.StderrPath {
		t.Errorf("logs of another host's run, no tails kept: %+v, want both paths, after the host's name", l)
	}
	r.Tails = &claim.Tails{Stdout: claim.Tail{Size: 3, Data: []byte("ok\n")}}
	f = newDeadFile(claim.Job{ID: "j", Command: "true"}, []claim.Run{r})
	if l := f.Dead.Logs[0]; l.Stdout != "elsewhere:"+r.StdoutPath || l.Stderr != "" {
		t.Errorf("logs of another host's run that printed to stdout only: %+v, want stdout's path alone", l)
	}
}

// TestDeadFileKeepsEnvBytes: a dead/ file is valid to drop into another
// home's spool: its env, values that are not UTF-8 included, comes back
// byte for byte.
func TestDeadFileKeepsEnvBytes(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"X": "a\xffb", "N\xfe": "v", "OK": "ok"}
	j := claim.Job{ID: "bytes", Command: "true", MaxRetries: 1, BackoffBase: 2, Env: env, State: claim.Dead, UpdatedAt: time.Now()}
	if err := WriteDead(dir, j, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "bytes.json"))
	if err != nil {
		t.Fatal(err)
	}
	nj, err := Parse("bytes.json", data)
	if err != nil {
		t.Fatalf("Parse(the dead file) = %v\n%s", err, data)
	}
	if !maps.Equal(nj.Env, env) {
		t.Errorf("Parse(the dead file).Env = %q, want %q\n%s", nj.Env, env, data)
	}
}

// TestSyncDeadRewritesAChangedJob: b, dead with a, is left dead by the
// re-drive of a, as x holds its unique_key; its error now says so, and so
// must its dead/ file, which is what an operator reads and drops back. A
// file of a job that did not change is not written again.
func TestSyncDeadRewritesAChangedJob(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	dir := t.TempDir()
	one := 1
	if _, err := s.EnqueueAll(ctx, []claim.NewJob{{ID: "a", Command: "false", MaxRetries: &one},
		{ID: "b", Command: "true", After: []string{"a"}, UniqueKey: "k"}}); err != nil {
		t.Fatal(err)
	}
	j, r, err := s.Claim(ctx, claim.Claimant{WorkerID: "w1", Host: "h", PID: 1, Lease: time.Minute, LogDir: "/logs"})
	if err != nil {
		t.Fatal(err)
	}
	code := 1
	if st, err := s.Fail(ctx, j, r, &code, "exit status 1", time.Hour); err != nil || st != claim.Dead {
		t.Fatalf("Fail = %s, %v; want dead", st, err)
	}
	if _, err := s.EndDependents(ctx, "a", claim.Dead); err != nil {
		t.Fatal(err)
	}
	mustKill(t, s, "other")
	if err := SyncDead(ctx, s, dir); err != nil {
		t.Fatal(err)
	}
	if got := deadError(t, dir, "b"); !strings.Contains(got, "dependency a ended dead") {
		t.Fatalf("b's dead file says %q; want that a died", got)
	}
	otherInfo, err := os.Stat(filepath.Join(dir, "other.json"))
	if err != nil {
		t.Fatal(err)
	}

	if _, err := s.EnqueueAll(ctx, []claim.NewJob{{ID: "x", Command: "true", UniqueKey: "k", RunAt: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if _, rearmed, err := s.RetryChain(ctx, "a"); err != nil || len(rearmed.Left) != 1 {
		t.Fatalf("RetryChain(a) = %+v, %v; want b left dead", rearmed, err)
	}
	b, err := s.Get(ctx, "b")
	if err != nil || b.State != claim.Dead {
		t.Fatalf("b = %s, %v; want dead", b.State, err)
	}
	if err := SyncDead(ctx, s, dir); err != nil {
		t.Fatal(err)
	}
	if got := deadError(t, dir, "b"); got != b.LastError {
		t.Errorf("b's dead file says %q; want the job's error, %q", got, b.LastError)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.json")); !os.IsNotExist(err) {
		t.Errorf("a.json: %v; want it gone, a is pending again", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "other.json")); err != nil || !os.SameFile(fi, otherInfo) {
		t.Errorf("other.json was written again (%v): its job did not change", err)
	}
	// Once written, the file is up to date: another sync leaves it.
	before, _ := os.Stat(filepath.Join(dir, "b.json"))
	if err := SyncDead(ctx, s, dir); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(filepath.Join(dir, "b.json")); err != nil || !os.SameFile(before, after) {
		t.Errorf("b.json was written again by a sync with nothing changed (%v)", err)
	}
}

// deadError is the error the dead file of id says the job died of.
func deadError(t *testing.T, dir, id string) string {
	t.Helper()
	var f struct {
		Dead struct {
			LastError string `json:"last_error"`
		} `json:"dead"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, id+".json")), &f); err != nil {
		t.Fatal(err)
	}
	return f.Dead.LastError
}

// TestDeadFileOfAJobWhoseDependencyIsDead: the dead/ file of a job that
// died with the job it waited for, dropped back while that job is still
// dead, is rejected, and the fix is to re-drive that job, which re-arms
// this one: not another "id", which would run the command at once without
// its dependency. A new job dropped after a dead job is told the same,
// and then to move it back.
func TestDeadFileOfAJobWhoseDependencyIsDead(t *testing.T) {
	w := newWatcher(t)
	ctx := context.Background()
	mustKill(t, w.Store, "a")
	if _, err := w.Store.Enqueue(ctx, claim.NewJob{ID: "b", Command: "true", After: []string{"a"}}); err == nil {
		t.Fatal("enqueue after a dead job was taken")
	}
	one := 1
	if _, err := w.Store.Enqueue(ctx, claim.NewJob{ID: "c", Command: "true", MaxRetries: &one}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Store.Enqueue(ctx, claim.NewJob{ID: "d", Command: "true", After: []string{"c"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := w.Store.Cancel(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Store.EndDependents(ctx, "c", claim.Canceled); err != nil {
		t.Fatal(err)
	}
	d, err := w.Store.Get(ctx, "d")
	if err != nil || d.State != claim.Dead {
		t.Fatalf("d = %s, %v; want dead with c", d.State, err)
	}
	runs, _ := w.Store.Runs(ctx, "d")
	if err := WriteDead(w.Dirs.Dead, d, runs); err != nil {
		t.Fatal(err)
	}
	drop(t, w.Dirs.Spool, "d.json", string(mustRead(t, filepath.Join(w.Dirs.Dead, "d.json"))))
	drop(t, w.Dirs.Spool, "e.json", `{"id": "e", "command": "true", "after": ["a"]}`)
	if st, err := w.Pass(ctx); err != nil || st.Rejected != 2 {
		t.Fatalf("Pass = %+v, %v; want both rejected", st, err)
	}
	for name, want := range map[string][]string{
		"d.json": {"job d waits for job c, which is canceled", "restart c first (queuectl restart c), which re-arms d",
			"queuectl rejected purge d.json"},
		"e.json": {"job a is dead", "re-drive a first (queuectl dlq retry a), then move it back: mv "},
	} {
		reason := string(mustRead(t, filepath.Join(w.Dirs.Rejected, name+reasonExt)))
		for _, s := range want {
			if !strings.Contains(reason, s) {
				t.Errorf("%s reason:\n%s\nwant %q", name, reason, s)
			}
		}
		if strings.Contains(reason, `another "id"`) {
			t.Errorf("%s reason:\n%s\nwant no new id as the fix: the job would run without its dependency", name, reason)
		}
	}
}

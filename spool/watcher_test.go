package spool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	_ "github.com/queuectl/queuectl/claim/sqlite" // the SQLite engine, for claim.Open
	"github.com/queuectl/queuectl/internal/testenv"
)

// mustOpenStore opens a fresh store in a temporary directory.
func mustOpenStore(tb testing.TB) *claim.Store {
	tb.Helper()
	return mustOpenStoreAt(tb, filepath.Join(tb.TempDir(), "queue.db"))
}

func mustOpenStoreAt(tb testing.TB, path string) *claim.Store {
	tb.Helper()
	s, err := claim.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// newWatcher returns a Watcher over a fresh home and store. Rescan is long
// so that, unless a test says otherwise, only fsnotify drives it.
func newWatcher(t *testing.T) *Watcher {
	t.Helper()
	home := t.TempDir()
	w := &Watcher{Dirs: DirsOf(home), Store: mustOpenStoreAt(t, filepath.Join(home, "queue.db")),
		Rescan: time.Hour, Events: func(e Event) { t.Log(e) }}
	if err := w.Dirs.Make(); err != nil {
		t.Fatal(err)
	}
	return w
}

// start runs w until the test ends and returns Run's result channel.
func start(t *testing.T, w *Watcher) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	t.Cleanup(func() {
		cancel()
		once.Do(func() {
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v, want nil after cancel", err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("Run did not return after cancel")
			}
		})
	})
	return done
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		<-tick.C
	}
}

// drop writes a file into dir the way careful writers do: name.tmp, then
// rename.
func drop(tb testing.TB, dir, name, content string) {
	tb.Helper()
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		tb.Fatal(err)
	}
}

func jobs(tb testing.TB, s *claim.Store) []claim.Job {
	tb.Helper()
	js, err := s.List(context.Background(), claim.Filter{})
	if err != nil {
		tb.Fatal(err)
	}
	return js
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestWatcherIngestsDrop(t *testing.T) {
	w := newWatcher(t)
	start(t, w)
	drop(t, w.Dirs.Spool, "first.json", `{"id": "first", "command": "echo 1"}`)
	eventually(t, 10*time.Second, "first.json ingested", func() bool { return len(jobs(t, w.Store)) == 1 })

	// The rescan is an hour away and nothing waits to settle, so only an
	// fsnotify event can make this one a job.
	began := time.Now()
	if err := os.WriteFile(filepath.Join(w.Dirs.Spool, "second.json"), []byte(`{"id": "second", "command": "echo 2"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "second.json ingested", func() bool { return len(jobs(t, w.Store)) == 2 })
	t.Logf("ingested within %v of the drop", time.Since(began))
	// Jobs are visible at the commit; the taken files go a moment later.
	eventually(t, 5*time.Second, "spool emptied", func() bool {
		waiting, _, err := Count(w.Dirs)
		return err == nil && waiting == 0 && !exists(filepath.Join(w.Dirs.Spool, "second.json"))
	})
	j, err := w.Store.Get(context.Background(), "second")
	if err != nil || j.Command != "echo 2" || j.State != claim.Pending {
		t.Fatalf("Get(second) = %+v, %v; want pending job running echo 2", j, err)
	}
	if _, rejected, _ := Count(w.Dirs); rejected != 0 {
		t.Errorf("%d rejected, want 0", rejected)
	}
}

// A file written in two halves 1.5 s apart is one job, not a rejection:
// with one open file, and appended to by name (which a take would break).
func TestWatcherWaitsForPartialWrite(t *testing.T) {
	halves := [2]string{`{"id": "slow", "comm`, `and": "echo slow"}`}
	writers := map[string]func(t *testing.T, path string, half string){
		"one open file": nil, // set below: it keeps its file open between halves
		"append by name": func(t *testing.T, path, half string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(half); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWatcher(t) // default Settle
			start(t, w)
			path := filepath.Join(w.Dirs.Spool, "slow.json")
			var f *os.File
			if write == nil {
				var err error
				if f, err = os.Create(path); err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				write = func(t *testing.T, _, half string) {
					if _, err := f.WriteString(half); err != nil {
						t.Fatal(err)
					}
				}
			}
			write(t, path, halves[0])
			time.Sleep(1500 * time.Millisecond) // the writer's pause, not a wait for the watcher
			if n := len(jobs(t, w.Store)); n != 0 || !exists(path) {
				t.Fatalf("after the first half: %d jobs, file in spool %v; want 0 jobs, file left alone", n, exists(path))
			}
			write(t, path, halves[1])
			if f != nil {
				f.Close() // a file held open for writing is not taken (F_SETLEASE)
			}
			eventually(t, 10*time.Second, "slow.json ingested", func() bool { return len(jobs(t, w.Store)) == 1 })
			j := jobs(t, w.Store)[0]
			if j.ID != "slow" || j.Command != "echo slow" {
				t.Errorf("job = %s %q, want slow \"echo slow\"", j.ID, j.Command)
			}
			if _, rejected, _ := Count(w.Dirs); rejected != 0 {
				t.Errorf("%d files rejected, want 0", rejected)
			}
		})
	}
}

// A file that no writer could finish — JSON wrong before its end, as
// `echo 'not json' > x.json` leaves — is rejected at once with what is
// wrong; one only cut short still waits to settle. With an hour to settle,
// only the content can tell them apart.
func TestWatcherRejectsGarbageAtOnce(t *testing.T) {
	w := newWatcher(t)
	w.Settle = time.Hour
	start(t, w)
	cut := filepath.Join(w.Dirs.Spool, "cut.json")
	if err := os.WriteFile(cut, []byte(`{"command": "echo cut"`), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(w.Dirs.Spool, "garbage.json")
	if err := os.WriteFile(garbage, []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reason := filepath.Join(w.Dirs.Rejected, "garbage.json"+reasonExt)
	eventually(t, 10*time.Second, "garbage.json rejected", func() bool { return exists(reason) && !exists(garbage) })
	first := strings.SplitN(string(mustRead(t, reason)), "\n", 2)[0]
	if want := "garbage.json: job spec is not valid JSON at byte 2: "; !strings.HasPrefix(first, want) {
		t.Errorf("reason of garbage.json begins %q, want %q", first, want)
	}
	// The cut file waits for its writer: another ingester's pass finds it
	// waiting, still in the spool.
	other := &Watcher{Dirs: w.Dirs, Store: w.Store, Settle: time.Hour}
	if st, err := other.Pass(context.Background()); err != nil || st.Waiting != 1 || st.Rejected != 0 || !exists(cut) {
		t.Errorf("Pass = %+v, %v, cut.json in the spool %v; want cut.json waiting there", st, err, exists(cut))
	}
}

func TestWatcherRejectsBadFiles(t *testing.T) {
	w := newWatcher(t)
	w.Settle = 300 * time.Millisecond
	ctx := context.Background()
	if _, err := w.Store.Enqueue(ctx, claim.NewJob{ID: "taken", Command: "echo mine"}); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "target.json")
	if err := os.WriteFile(outside, []byte(`{"command": "echo linked"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	type bad struct {
		make func(path string) error
		want string // in the reason's first line
	}
	write := func(content string) func(string) error {
		return func(path string) error { return os.WriteFile(path, []byte(content), 0o600) }
	}
	cases := map[string]bad{
		"syntax.json":    {write(`{"command": "x",}`), "not valid JSON at byte 17"},
		"truncated.json": {write(`{"command": "x"`), "not a complete JSON object"},
		"array.json":     {write(`["echo hi"]`), "must be a JSON object"},
		"unknown.json":   {write(`{"comand": "echo"}`), `unknown field "comand"`},
		"bad_id.json":    {write(`{"id": "a/b", "command": "echo"}`), `id "a/b" is not valid`},
		"no_cmd.json":    {write(`{"id": "x"}`), `missing "command"`},
		"conflict.json":  {write(`{"id": "taken", "command": "echo theirs"}`), "exists already"},
		"no_cwd.json":    {write(`{"command": "pwd", "cwd": "/no/such/dir"}`), "not an existing directory"},
		"big.json":       {write(`{"command": "echo"}` + strings.Repeat(" ", MaxSize)), "over the limit of 1 MiB"},
		"link.json":      {func(p string) error { return os.Symlink(outside, p) }, "symbolic link"},
		"fifo.json":      {func(p string) error { return syscall.Mkfifo(p, 0o600) }, "named pipe"},
		"dir.json":       {func(p string) error { return os.Mkdir(p, 0o700) }, "a directory"},
	}
	if os.Getuid() == 0 {
		cases["foreign.json"] = bad{func(p string) error {
			// Made and given away outside the spool, then renamed in: the
			// watcher never sees it as this user's (it would be ingested
			// in between).
			tmp := filepath.Join(filepath.Dir(filepath.Dir(p)), "foreign.json.tmp")
			if err := os.WriteFile(tmp, []byte(`{"command": "rm -rf ~"}`), 0o644); err != nil {
				return err
			}
			if err := os.Lchown(tmp, 4242, 4242); err != nil {
				return err
			}
			return os.Rename(tmp, p)
		}, "owned by uid 4242"}
	} else {
		t.Log("not root: cannot make a foreign-owned file; that case is skipped")
	}
	start(t, w)
	for name, c := range cases {
		if err := c.make(filepath.Join(w.Dirs.Spool, name)); err != nil {
			t.Fatalf("make %s: %v", name, err)
		}
	}
	for name, c := range cases {
		reason := filepath.Join(w.Dirs.Rejected, name+reasonExt)
		eventually(t, 10*time.Second, name+" rejected", func() bool {
			return exists(filepath.Join(w.Dirs.Rejected, name)) && exists(reason) && !exists(filepath.Join(w.Dirs.Spool, name))
		})
		lines := strings.Split(strings.TrimSuffix(string(mustRead(t, reason)), "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], name+": ") || !strings.Contains(lines[0], c.want) || !strings.HasPrefix(lines[1], "fix: ") {
			t.Errorf("reason of %s = %q, want %q on the first line and a fix on the second", name, lines, c.want)
		}
	}
	if j, err := w.Store.Get(ctx, "taken"); err != nil || j.Command != "echo mine" {
		t.Errorf("Get(taken) = %q, %v; the conflicting file must leave it untouched", j.Command, err)
	}
	if target := mustRead(t, outside); !strings.Contains(string(target), "linked") {
		t.Errorf("the symlink's target changed: %q", target)
	}
	// Still running: a good file becomes a job.
	drop(t, w.Dirs.Spool, "good.json", `{"id": "good", "command": "echo good"}`)
	eventually(t, 10*time.Second, "good.json ingested", func() bool { _, err := w.Store.Get(ctx, "good"); return err == nil })
	if n := len(jobs(t, w.Store)); n != 2 {
		t.Errorf("%d jobs, want 2 (taken, good)", n)
	}
	eventually(t, 5*time.Second, "good.json removed", func() bool { waiting, _, _ := Count(w.Dirs); return waiting == 0 })
	if _, rejected, err := Count(w.Dirs); rejected != len(cases) || err != nil {
		t.Errorf("Count rejected = %d, %v; want %d", rejected, err, len(cases))
	}
}

func TestRejectedNamesNeverOverwrite(t *testing.T) {
	w := newWatcher(t)
	for i := range 3 {
		drop(t, w.Dirs.Spool, "x.json", fmt.Sprintf(`{"round": %d}`, i))
		st, err := w.Pass(context.Background())
		if err != nil || st.Rejected != 1 {
			t.Fatalf("Pass = %+v, %v; want 1 rejected", st, err)
		}
	}
	for i, name := range []string{"x.json", "x.1.json", "x.2.json"} {
		got := string(mustRead(t, filepath.Join(w.Dirs.Rejected, name)))
		if want := fmt.Sprintf(`{"round": %d}`, i); got != want {
			t.Errorf("rejected/%s = %q, want %q", name, got, want)
		}
		reason := string(mustRead(t, filepath.Join(w.Dirs.Rejected, name+reasonExt)))
		if !strings.Contains(reason, "mv "+filepath.Join(w.Dirs.Rejected, name)+" "+filepath.Join(w.Dirs.Spool, "x.json")) {
			t.Errorf("reason of %s = %q, want the mv back to spool/x.json", name, reason)
		}
	}
}

// A spool that turns unsafe while the watcher runs pauses ingestion, which
// the watcher says once; it keeps its private directory, and resumes by
// itself once the spool is safe again.
func TestWatcherPausesWhileSpoolUnsafe(t *testing.T) {
	w := newWatcher(t)
	var mu sync.Mutex
	var log strings.Builder
	w.Events = func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(&log, e)
	}
	said := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
	done := start(t, w)
	drop(t, w.Dirs.Spool, "a.json", `{"id": "a", "command": "echo a"}`)
	eventually(t, 10*time.Second, "a.json ingested", func() bool { return len(jobs(t, w.Store)) == 1 })
	if err := os.Chmod(w.Dirs.Spool, 0o777); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the watcher to say the spool is unsafe", func() bool {
		return strings.Contains(said(), "spool "+w.Dirs.Spool+" is unsafe, not ingesting it")
	})
	if u := w.Dirs.Unsafe(); u == nil || !strings.Contains(u.Problem, "writable by group or others") {
		t.Errorf("Dirs.Unsafe() = %v, want the mode named", u)
	}
	drop(t, w.Dirs.Spool, "b.json", `{"id": "b", "command": "echo b"}`)
	drop(t, w.Dirs.Spool, "c.json", `{"id": "c", "command": "echo c"}`)
	if err := os.Chmod(w.Dirs.Spool, 0o700); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "b.json and c.json ingested after the fix", func() bool { return len(jobs(t, w.Store)) == 3 })
	select {
	case err := <-done:
		t.Fatalf("Run = %v while the spool was unsafe, want it to go on", err)
	default:
	}
	if text := said(); strings.Count(text, "is unsafe") != 1 || !strings.Contains(text, "is safe again") {
		t.Errorf("the watcher said:\n%s\nwant one line saying the spool is unsafe, then one saying it is safe again", text)
	}
	if owners, _ := listNames(filepath.Join(w.Dirs.Spool, ingesting)); len(owners) != 1 {
		t.Errorf("spool/.ingesting holds %v, want the watcher's own directory still there", owners)
	}
	if w.Dirs.Unsafe() != nil {
		t.Errorf("Dirs.Unsafe() after the fix = %v, want nil", w.Dirs.Unsafe())
	}
}

func TestUniqueKeySkipIsNoError(t *testing.T) {
	w := newWatcher(t)
	ctx := context.Background()
	if _, err := w.Store.Enqueue(ctx, claim.NewJob{ID: "running", Command: "backup", UniqueKey: "nightly"}); err != nil {
		t.Fatal(err)
	}
	drop(t, w.Dirs.Spool, "again.json", `{"command": "backup", "unique_key": "nightly"}`)
	st, err := w.Pass(ctx)
	if err != nil || st != (Stats{Skipped: 1}) {
		t.Fatalf("Pass = %+v, %v; want 1 skipped", st, err)
	}
	if exists(filepath.Join(w.Dirs.Spool, "again.json")) || len(jobs(t, w.Store)) != 1 {
		t.Error("the skipped file must be removed and make no job")
	}
}

func TestPassLeavesIncompleteFile(t *testing.T) {
	w := newWatcher(t)
	path := filepath.Join(w.Dirs.Spool, "half.json")
	if err := os.WriteFile(path, []byte(`{"command": "ec`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"note.txt", ".hidden.json", "x.json.tmp"} {
		if err := os.WriteFile(filepath.Join(w.Dirs.Spool, n), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st, err := w.Pass(context.Background())
	if err != nil || st != (Stats{Waiting: 1}) {
		t.Fatalf("Pass = %+v, %v; want 1 waiting", st, err)
	}
	if !exists(path) {
		t.Fatal("the incomplete file must stay in the spool")
	}
	if waiting, rejected, err := Count(w.Dirs); waiting != 1 || rejected != 0 || err != nil {
		t.Errorf("Count = %d, %d, %v; want 1, 0, nil", waiting, rejected, err)
	}
}

// When the kernel's event queue overflows, the watcher says so and
// rescans. The watcher is held inside a pass (its Log blocks) while more
// events than the queue holds are made, with names it ignores.
func TestWatcherRescansOnOverflow(t *testing.T) {
	limit, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		testenv.Missing(t, "no inotify here")
	}
	var queued int
	fmt.Sscan(string(limit), &queued)
	if queued <= 0 || queued > 100000 {
		testenv.Missing(t, "max_queued_events is %d: too many files to make", queued)
	}
	w := newWatcher(t)
	held, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var lines []string
	w.Events = func(e Event) {
		line := e.String()
		mu.Lock()
		lines = append(lines, line)
		mu.Unlock()
		if strings.HasPrefix(line, "ingested hold.json") {
			close(held)
			<-release
		}
	}
	start(t, w)
	drop(t, w.Dirs.Spool, "hold.json", `{"command": "echo hold"}`)
	<-held
	for i := range queued + 100 {
		if err := os.WriteFile(filepath.Join(w.Dirs.Spool, fmt.Sprintf("n%06d.json.tmp", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	drop(t, w.Dirs.Spool, "after.json", `{"id": "after", "command": "echo after"}`)
	close(release)
	eventually(t, 30*time.Second, "the overflow logged", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			if strings.Contains(l, "overflowed") {
				return true
			}
		}
		return false
	})
	eventually(t, 10*time.Second, "after.json ingested", func() bool { return len(jobs(t, w.Store)) == 2 })
}

// A file name may hold a newline or an escape sequence (a shell loop's
// mistake, a hostile drop): the worker's log shows one line per event and
// the reason's first line is the whole reason, the name Go-quoted in both,
// so that no name can break a line in two or drive the terminal.
func TestWatcherQuotesControlCharactersInNames(t *testing.T) {
	w := newWatcher(t)
	var mu sync.Mutex
	var said []Event
	w.Events = func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		said = append(said, e)
	}
	start(t, w)
	good, bad := "new\nline.json", "bad\x1b[31m\nname.json"
	for name, content := range map[string]string{good: `{"id": "nl", "command": "true"}`, bad: `{"command": true}`} {
		if err := os.WriteFile(filepath.Join(w.Dirs.Spool, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	lines := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, e := range said {
			if e.Kind == EventIngested || e.Kind == EventRejected {
				out = append(out, e.String())
			}
		}
		return out
	}
	eventually(t, 10*time.Second, "one file ingested and one rejected", func() bool { return len(lines()) == 2 })
	for _, l := range lines() {
		if strings.ContainsAny(l, "\n\x1b") {
			t.Errorf("event line %q holds a newline or an escape, want the name quoted", l)
		}
		if !strings.Contains(l, `"new\nline.json"`) && !strings.Contains(l, `"bad\x1b[31m\nname.json"`) {
			t.Errorf("event line %q does not name the file Go-quoted", l)
		}
	}
	rs, err := ListRejected(w.Dirs)
	if err != nil || len(rs) != 1 {
		t.Fatalf("ListRejected = %+v, %v; want the one bad file", rs, err)
	}
	if want := `"bad\x1b[31m\nname.json": field "command" must be a JSON string`; !strings.HasPrefix(rs[0].Reason, want) {
		t.Errorf("reason's first line = %q, want it to start with %q", rs[0].Reason, want)
	}
	if rs[0].Name != bad {
		t.Errorf("rejected name = %q, want %q (the file keeps its name)", rs[0].Name, bad)
	}
}

// A file that is not *.json is said once per name by a watcher, however
// many passes see it: a worker's first Pass and then its Run included.
func TestIgnoredFileSaidOnce(t *testing.T) {
	w := newWatcher(t)
	drop(t, w.Dirs.Spool, "notes.txt", "not a job")
	var mu sync.Mutex
	said := 0
	w.Events = func(e Event) {
		if e.Kind == EventIgnored {
			mu.Lock()
			said++
			mu.Unlock()
		}
	}
	if _, err := w.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.Rescan = 10 * time.Millisecond
	var passes atomic.Int64
	w.onPass = func() { passes.Add(1) }
	start(t, w)
	// onPass comes before each pass: a third means two passes of Run ended.
	eventually(t, 10*time.Second, "two passes of Run", func() bool { return passes.Load() > 2 })
	mu.Lock()
	defer mu.Unlock()
	if said != 1 {
		t.Errorf("notes.txt said ignored %d times over a Pass and a Run, want once", said)
	}
}

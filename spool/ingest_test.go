package spool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Several Watchers, each with its own *sql.DB on one database file, share
// one spool: every file becomes exactly one job.
func TestManyWatchersOneSpool(t *testing.T) {
	const files, watchers = 2000, 3
	home := t.TempDir()
	dirs := DirsOf(home)
	if err := dirs.Make(); err != nil {
		t.Fatal(err)
	}
	for i := range files / 2 { // half before the watchers start, half while they run
		drop(t, dirs.Spool, fmt.Sprintf("job-%04d.json", i), fmt.Sprintf(`{"command": "echo %d"}`, i))
	}
	var stores []*claim.Store
	for range watchers {
		s := mustOpenStoreAt(t, filepath.Join(home, "queue.db"))
		stores = append(stores, s)
		start(t, &Watcher{Dirs: dirs, Store: s, Rescan: 200 * time.Millisecond})
	}
	for i := files / 2; i < files; i++ {
		drop(t, dirs.Spool, fmt.Sprintf("job-%04d.json", i), fmt.Sprintf(`{"command": "echo %d"}`, i))
	}
	eventually(t, 60*time.Second, "all files ingested", func() bool {
		waiting, _, err := Count(dirs)
		return err == nil && waiting == 0 && len(jobs(t, stores[0])) >= files
	})
	assertOneJobPerFile(t, stores[1], files)
	if _, rejected, _ := Count(dirs); rejected != 0 {
		t.Errorf("%d files rejected, want 0", rejected)
	}
}

// assertOneJobPerFile checks that the jobs are exactly "echo 0" … "echo n-1".
func assertOneJobPerFile(t *testing.T, s *claim.Store, n int) {
	t.Helper()
	js := jobs(t, s)
	seen := make(map[string]int, len(js))
	for _, j := range js {
		seen[j.Command]++
	}
	for i := range n {
		if c := seen[fmt.Sprintf("echo %d", i)]; c != 1 {
			t.Errorf("file %d made %d jobs, want 1", i, c)
		}
	}
	if len(js) != n {
		t.Errorf("%d jobs, want %d", len(js), n)
	}
}

// leftBehind puts the taken files tks in the directory of an ingester
// that died, each a job named as its file (without .json), and returns
// that directory.
func leftBehind(t *testing.T, w *Watcher, tks ...taken) string {
	t.Helper()
	dead := filepath.Join(w.Dirs.Spool, ingesting, "4242-deadbeef")
	if err := os.MkdirAll(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tk := range tks {
		content := fmt.Sprintf(`{"id": %q, "command": "echo"}`, tk.name[:len(tk.name)-5])
		if err := os.WriteFile(filepath.Join(dead, tk.file()), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dead
}

// A crashed ingester leaves files in its directory: one whose job it
// committed before it died, one it had not. The next pass makes one job of
// each, not two.
func TestPassAdoptsFilesOfCrashedIngester(t *testing.T) {
	w := newWatcher(t)
	ctx := context.Background()
	committed := taken{key: randomHex(16), name: "committed.json"}
	if _, err := w.Store.Enqueue(ctx, claim.NewJob{ID: "committed", Command: "echo c", IngestKey: committed.ingestKey()}); err != nil {
		t.Fatal(err)
	}
	uncommitted := taken{key: randomHex(16), name: "uncommitted.json"}
	dead := leftBehind(t, w, committed, uncommitted)
	if waiting, _, _ := Count(w.Dirs); waiting != 2 {
		t.Errorf("Count waiting = %d, want 2 (taken files count as waiting)", waiting)
	}
	var events []Event
	w.Events = func(e Event) { events = append(events, e) }
	st, err := w.Pass(ctx)
	if err != nil || st != (Stats{Ingested: 1, Duplicates: 1}) {
		t.Fatalf("Pass = %+v, %v; want 1 ingested, 1 duplicate", st, err)
	}
	// Nothing went wrong: no warning (which -q would print), but the
	// adoption and the recovered file are said.
	said := map[EventKind]Event{}
	for _, e := range events {
		if e.Level() != "info" {
			t.Errorf("%s event %q, want every event info", e.Level(), e)
		}
		said[e.Kind] = e
	}
	if e := said[EventAdopted]; e.Count != 2 {
		t.Errorf("adopted event %+v, want 2 files", e)
	}
	if e := said[EventRecovered]; e.File != "committed.json" || e.Job != "committed" {
		t.Errorf("recovered event %+v, want committed.json as job committed", e)
	}
	if n := len(jobs(t, w.Store)); n != 2 {
		t.Errorf("%d jobs, want 2", n)
	}
	if j, err := w.Store.Get(ctx, "uncommitted"); err != nil {
		t.Errorf("Get(uncommitted) = %v", err)
	} else if j.Command != "echo" {
		t.Errorf("Get(uncommitted).Command = %q", j.Command)
	}
	if exists(dead) {
		t.Error("the crashed ingester's directory is still there")
	}
	if owners, _ := listNames(filepath.Join(w.Dirs.Spool, ingesting)); len(owners) != 0 {
		t.Errorf("ingesting directories left: %v", owners)
	}
}

// An ingester died after its file's job was committed and before it could
// unlink the file. The job ran, and was purged, before another ingester
// adopted the file: the file is a duplicate still, and the job does not
// come back to run a second time.
func TestAdoptedFileOfARemovedJobMakesNoJob(t *testing.T) {
	w := newWatcher(t)
	ctx := context.Background()
	tk := taken{key: randomHex(16), name: "nightly.json"}
	if _, err := w.Store.Enqueue(ctx, claim.NewJob{ID: "nightly", Command: "echo once", IngestKey: tk.ingestKey()}); err != nil {
		t.Fatal(err)
	}
	leftBehind(t, w, tk)
	_, r, err := w.Store.Claim(ctx, claim.Claimant{WorkerID: "w", Host: "h", PID: os.Getpid(), Lease: time.Minute, LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Store.Complete(ctx, r); err != nil {
		t.Fatal(err)
	}
	if ids, err := w.Store.PurgeFinished(ctx, claim.Completed, time.Now().Add(time.Hour)); err != nil || len(ids) != 1 {
		t.Fatalf("purge = %v, %v; want [nightly]", ids, err)
	}
	st, err := w.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if j, err := w.Store.Get(ctx, "nightly"); !errors.Is(err, claim.ErrNotFound) {
		t.Errorf("the purged job is back, %s (pass: %+v): it would run again", j.State, st)
	}
	if st.Ingested != 0 || st.Duplicates != 1 {
		t.Errorf("pass = %+v, want the adopted file a duplicate", st)
	}
	if left, _ := filepath.Glob(filepath.Join(w.Dirs.Spool, ingesting, "*", "*")); len(left) != 0 {
		t.Errorf("files left in %s: %v", ingesting, left)
	}
}

// A live ingester's directory is locked; nobody adopts its files until
// its lock is gone.
func TestPassLeavesLiveIngesterAlone(t *testing.T) {
	w := newWatcher(t)
	live := filepath.Join(w.Dirs.Spool, ingesting, "4243-0badf00d")
	if err := os.MkdirAll(live, 0o700); err != nil {
		t.Fatal(err)
	}
	lock, ok := lockDir(live)
	if !ok {
		t.Fatal("cannot lock")
	}
	tk := taken{key: randomHex(16), name: "busy.json"}
	if err := os.WriteFile(filepath.Join(live, tk.file()), []byte(`{"command": "echo busy"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := w.Pass(context.Background())
	if err != nil || st != (Stats{}) || !exists(filepath.Join(live, tk.file())) {
		t.Fatalf("Pass = %+v, %v; want nothing done while the owner lives", st, err)
	}
	lock.Close() // the owner dies
	st, err = w.Pass(context.Background())
	if err != nil || st != (Stats{Ingested: 1}) {
		t.Fatalf("Pass = %+v, %v; want 1 ingested after the owner died", st, err)
	}
}

// TestHelperWatcher is the body of the child processes of TestSurvivesKill.
func TestHelperWatcher(t *testing.T) {
	home := os.Getenv("SPOOL_TEST_HOME")
	if home == "" {
		t.Skip("helper process for TestSurvivesKill")
	}
	s, err := claim.Open(filepath.Join(home, "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	w := &Watcher{Dirs: DirsOf(home), Store: s, Rescan: 50 * time.Millisecond}
	if os.Getenv("SPOOL_TEST_DEBUG") != "" {
		w.Log = func(f string, a ...any) { fmt.Fprintf(os.Stderr, time.Now().Format("05.000 ")+f+"\n", a...) }
		fmt.Fprintln(os.Stderr, time.Now().Format("05.000"), "opened")
	}
	t.Fatal(w.Run(context.Background())) // runs until killed
}

// Watcher processes are killed with SIGKILL at random moments while they
// take, commit and remove files. Afterwards one pass settles everything:
// each file is one job, none is lost, none is made twice.
func TestSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	home := t.TempDir()
	dirs := DirsOf(home)
	if err := dirs.Make(); err != nil {
		t.Fatal(err)
	}
	s := mustOpenStoreAt(t, filepath.Join(home, "queue.db"))
	const rounds, perRound = 8, 200
	n := 0
	var span time.Duration // how long two watchers take to ingest a round
	for round := range rounds {
		for range perRound {
			drop(t, dirs.Spool, fmt.Sprintf("job-%05d.json", n), fmt.Sprintf(`{"command": "echo %d"}`, n))
			n++
		}
		var out syncBuffer
		began := time.Now()
		var procs []*exec.Cmd
		for range 2 {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWatcher$")
			cmd.Env = append(os.Environ(), "SPOOL_TEST_HOME="+home)
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			procs = append(procs, cmd)
		}
		if round == 0 {
			// Measure the span the later rounds kill within, from start-up
			// to the last file gone; it adapts to -race and slow machines.
			eventually(t, 60*time.Second, "round 0 ingested", func() bool { w, _, _ := Count(dirs); return w == 0 })
			span = time.Since(began)
		}
		var wg sync.WaitGroup
		for _, cmd := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Until(began.Add(rand.N(span)))) // a random instant to die at
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()
			}()
		}
		wg.Wait()
		waiting, _, _ := Count(dirs)
		t.Logf("round %d (kills within %v): %d jobs, %d files waiting; %s", round, span, len(jobs(t, s)), waiting, out.String())
	}
	st, err := (&Watcher{Dirs: dirs, Store: s}).Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("final pass: %+v", st)
	assertOneJobPerFile(t, s, n)
	if waiting, rejected, err := Count(dirs); waiting != 0 || rejected != 0 || err != nil {
		t.Errorf("Count = %d, %d, %v; want 0, 0, nil", waiting, rejected, err)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// A stray file in .ingesting/ looks like an unlocked directory to flock;
// it must be left alone, never taken for a dead ingester and removed.
func TestAdoptLeavesStrayFiles(t *testing.T) {
	w := newWatcher(t)
	root := filepath.Join(w.Dirs.Spool, ingesting)
	os.MkdirAll(root, 0o700)
	stray := filepath.Join(root, "stray.json")
	if err := os.WriteFile(stray, []byte(`{"command": "echo"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !exists(stray) {
		t.Fatal("the stray file was removed")
	}
}

// Files dropped in name order become jobs in that order, across batches:
// the commits of a pass run behind the takes, but in the order taken.
func TestPassKeepsNameOrderAcrossBatches(t *testing.T) {
	w := newWatcher(t)
	n := 2*batchSize + 100
	for i := range n {
		drop(t, w.Dirs.Spool, fmt.Sprintf("job-%05d.json", i), fmt.Sprintf(`{"command": "echo %d"}`, i))
	}
	st, err := w.Pass(context.Background())
	if err != nil || st != (Stats{Ingested: n}) {
		t.Fatalf("Pass = %+v, %v; want %d ingested", st, err, n)
	}
	js := jobs(t, w.Store)
	slices.SortFunc(js, func(a, b claim.Job) int { return cmp.Compare(a.Seq, b.Seq) })
	for i, j := range js {
		if want := fmt.Sprintf("echo %d", i); j.Command != want {
			t.Fatalf("job %d in enqueue order runs %q, want %q", i, j.Command, want)
		}
	}
}

// A commit that fails stops the pass: the files taken so far stay in the
// ingester's directory, the rest in the spool, and the next pass makes
// every file exactly one job.
func TestFailedCommitLeavesFilesForNextPass(t *testing.T) {
	w := newWatcher(t)
	n := 3 * batchSize
	for i := range n {
		drop(t, w.Dirs.Spool, fmt.Sprintf("job-%05d.json", i), `{"command": "true"}`)
	}
	// Replace the database under the open store: its commits now fail
	// with ErrReplaced, as they would for a real deleted database.
	path := w.Store.Path()
	other := mustOpenStoreAt(t, path+".new")
	other.Close()
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	st, err := w.Pass(context.Background())
	if !errors.Is(err, claim.ErrReplaced) || st.Ingested != 0 {
		t.Fatalf("Pass on a replaced database = %+v, %v; want nothing ingested and ErrReplaced", st, err)
	}
	w.Store = mustOpenStoreAt(t, path)
	st, err = w.Pass(context.Background())
	if err != nil || st != (Stats{Ingested: n}) {
		t.Fatalf("next Pass = %+v, %v; want %d ingested", st, err, n)
	}
	if got := len(jobs(t, w.Store)); got != n {
		t.Errorf("%d jobs, want %d", got, n)
	}
	if left, _ := listNames(w.Dirs.Spool); len(left) != 1 || left[0] != ingesting {
		t.Errorf("left in the spool: %v", left)
	}
}

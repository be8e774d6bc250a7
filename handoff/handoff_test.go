package handoff

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/queuectl/queuectl/claim"
	_ "github.com/queuectl/queuectl/claim/sqlite" // the SQLite engine, for claim.Open
	"github.com/queuectl/queuectl/handoff/wire"
	"github.com/queuectl/queuectl/internal/testenv"
)

func mustOpenStore(tb testing.TB) *claim.Store {
	tb.Helper()
	s, err := claim.Open(filepath.Join(tb.TempDir(), "queue.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// serve starts a Server for s on a socket in a fresh directory; the test's
// cleanup stops it and waits for it.
func serve(tb testing.TB, s Store) (path string, logged func() string) {
	tb.Helper()
	path = filepath.Join(tb.TempDir(), SocketName)
	ln, err := Listen(path)
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var log strings.Builder
	srv := &Server{Store: s, Log: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&log, format+"\n", args...)
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("Serve = %v", err)
		}
	})
	return path, func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
}

func TestEnqueueStoresThroughTheWorker(t *testing.T) {
	s := mustOpenStore(t)
	path, _ := serve(t, s)
	nj := claim.NewJob{ID: claim.NewID(s.Now()), Command: "echo hi", Env: map[string]string{"A": "b"}}
	r, err := Enqueue(path, s.Path(), nj)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(context.Background(), nj.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != claim.Created || r.Job.ID != nj.ID || r.Job.Command != got.Command ||
		!r.Job.CreatedAt.Equal(got.CreatedAt) || r.Job.Env["A"] != "b" {
		t.Errorf("Enqueue = %+v, want the stored job %+v", r, got)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}

// EnqueueBrief, the small queuectl's enqueue, reads the three fields it
// prints from the worker's answer, one of many buffers as well as of one;
// a skipped job's brief is the job that holds the key.
func TestEnqueueBrief(t *testing.T) {
	s := mustOpenStore(t)
	path, _ := serve(t, s)
	long := "echo " + strings.Repeat("x", 20<<10)
	for _, command := range []string{"true", long} {
		nj := claim.NewJob{ID: claim.NewID(s.Now()), Command: command, UniqueKey: "k\u2028\"<" + command[:4]}
		b, outcome, err := wire.EnqueueBrief(path, s.Path(), nj)
		if err != nil || outcome != claim.Created || b != (wire.Brief{ID: nj.ID, UniqueKey: nj.UniqueKey, State: claim.Pending}) {
			t.Errorf("EnqueueBrief of %d bytes = %+v, %s, %v; want %s created pending", len(command), b, outcome, err, nj.ID)
		}
		again := claim.NewJob{ID: claim.NewID(s.Now()), Command: "other", UniqueKey: nj.UniqueKey}
		b, outcome, err = wire.EnqueueBrief(path, s.Path(), again)
		if err != nil || outcome != claim.Skipped || b.ID != nj.ID {
			t.Errorf("EnqueueBrief of a held key = %+v, %s, %v; want %s skipped", b, outcome, err, nj.ID)
		}
	}
}

// Concurrent clients share commits, and each gets its own job back.
func TestConcurrentEnqueuesEachGetTheirJob(t *testing.T) {
	s := mustOpenStore(t)
	path, _ := serve(t, s)
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("job-%d", i)
			r, err := Enqueue(path, s.Path(), claim.NewJob{ID: id, Command: "true"})
			if err == nil && r.Job.ID != id {
				err = fmt.Errorf("asked for %s, got %s", id, r.Job.ID)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if c, err := s.Counts(context.Background()); err != nil || c[claim.Pending] != n {
		t.Errorf("pending = %d (%v), want %d", c[claim.Pending], err, n)
	}
}

// A job the store refuses is declined, and stored by nobody; a job of
// another database is declined before anything is written.
func TestDeclined(t *testing.T) {
	s := mustOpenStore(t)
	path, _ := serve(t, s)
	if _, err := Enqueue(path, s.Path(), claim.NewJob{ID: "a", Command: "true"}); err != nil {
		t.Fatal(err)
	}
	_, err := Enqueue(path, s.Path(), claim.NewJob{ID: "a", Command: "other"})
	if !errors.Is(err, ErrDeclined) || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("Enqueue of a taken id = %v, want ErrDeclined saying it exists", err)
	}
	other := filepath.Join(t.TempDir(), "queue.db")
	if _, err := Enqueue(path, other, claim.NewJob{ID: "b", Command: "true"}); !errors.Is(err, ErrDeclined) {
		t.Errorf("Enqueue for another database = %v, want ErrDeclined", err)
	}
	if _, err := s.Get(context.Background(), "b"); !errors.Is(err, claim.ErrNotFound) {
		t.Errorf("job b: %v, want not found", err)
	}
	if _, err := Enqueue(filepath.Join(t.TempDir(), SocketName), s.Path(), claim.NewJob{ID: "c", Command: "true"}); !errors.Is(err, ErrDeclined) {
		t.Errorf("Enqueue with nobody listening = %v, want ErrDeclined", err)
	}
}

// A request from another build (its job types differ) is declined.
func TestOtherBuildIsDeclined(t *testing.T) {
	s := mustOpenStore(t)
	path, _ := serve(t, s)
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, `{"Fingerprint": "0", "DB": %q, "Job": {"ID": "x", "Command": "true"}}`+"\n", s.Path())
	line, _ := bufio.NewReader(conn).ReadString('\n')
	if !strings.Contains(line, `"Declined":"another build of queuectl"`) {
		t.Errorf("answer %q, want declined: another build", line)
	}
}

func TestListen(t *testing.T) {
	s := mustOpenStore(t)
	path, _ := serve(t, s)
	if _, err := Listen(path); !errors.Is(err, ErrServed) {
		t.Errorf("Listen on a served socket = %v, want ErrServed", err)
	}
	// A socket nobody accepts on any more, as a killed worker leaves it.
	stale := filepath.Join(t.TempDir(), SocketName)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	ln, err = Listen(stale)
	if err != nil {
		t.Fatalf("Listen on a stale socket = %v, want it replaced", err)
	}
	ln.Close()
}

// peerChild names, in the environment of the re-executed test binary, the
// socket a client of another uid writes a job to.
const peerChild = "QUEUECTL_TEST_HANDOFF_SOCKET"

// A client of another user is refused before its request is read, even
// when the socket's directory and mode would let it connect.
func TestPeerOfAnotherUserIsRefused(t *testing.T) {
	if path := os.Getenv(peerChild); path != "" {
		conn, err := net.Dial("unix", path)
		if err != nil {
			fmt.Println("dial:", err)
			return
		}
		fmt.Fprintf(conn, `{"Fingerprint": %q, "DB": "", "Job": {"ID": "foreign", "Command": "true"}}`+"\n", fingerprint(false))
		line, _ := bufio.NewReader(conn).ReadString('\n')
		fmt.Printf("answer: %q\n", line)
		return
	}
	testenv.Root(t, "run a client as another user")
	s := mustOpenStore(t)
	path, logged := serve(t, s)
	// Open the way, as a careless chmod would, and give the other user a
	// copy of this test binary it may run.
	bin := filepath.Join(filepath.Dir(path), "handoff.test")
	if data, err := os.ReadFile(os.Args[0]); err != nil || os.WriteFile(bin, data, 0o755) != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	for _, p := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		os.Chmod(p, 0o755)
	}
	os.Chmod(path, 0o777)
	child := exec.Command(bin, "-test.run=^TestPeerOfAnotherUserIsRefused$")
	child.Env = append(os.Environ(), peerChild+"="+path)
	child.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := child.CombinedOutput()
	if err != nil {
		testenv.Missing(t, "cannot run the test binary as uid 65534: %v: %s", err, out)
	}
	if !strings.Contains(string(out), `answer: ""`) {
		t.Errorf("foreign client read %s, want no answer", out)
	}
	if !strings.Contains(logged(), "refused a peer of uid 65534") {
		t.Errorf("server log %q, want the refusal", logged())
	}
	if _, err := s.Get(context.Background(), "foreign"); !errors.Is(err, claim.ErrNotFound) {
		t.Errorf("job of the foreign client: %v, want not found", err)
	}
}

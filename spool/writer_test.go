package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/internal/testenv"
)

// A file that a writer still holds open is never taken, however long the
// writer pauses: it waits, and becomes a job once written and closed.
func TestFileOpenForWritingIsNotTaken(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.Missing(t, "only Linux tells whether a file is open for writing (F_SETLEASE)")
	}
	w := newWatcher(t)
	w.Settle = time.Nanosecond // whatever its age, only the open writer keeps it waiting
	path := filepath.Join(w.Dirs.Spool, "slow.json")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(`{"id": "slow", "comm`); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		st, err := w.Pass(ctx)
		if err != nil || st.Waiting != 1 || st.Rejected != 0 {
			t.Fatalf("Pass with a writer holding slow.json = %+v, %v; want it waiting, not rejected", st, err)
		}
	}
	if !exists(path) {
		t.Fatalf("slow.json left the spool while its writer held it open")
	}
	if _, err := f.WriteString(`and": "true"}`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, err := w.Pass(ctx); err != nil || st.Ingested != 1 {
		t.Fatalf("Pass after the writer closed slow.json = %+v, %v; want it ingested", st, err)
	}
}

// A file is not moved to rejected/ without its reason: on a full disk it
// stays, and is rejected with a reason once there is room.
func TestRejectWithoutRoomKeepsTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m,mode=0700"); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs here (%v); run as root to test a full disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	w := &Watcher{Dirs: DirsOf(filepath.Join(dir, "home")), Store: mustOpenStore(t), Rescan: time.Hour}
	if err := w.Dirs.Make(); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(w.Dirs.Spool, "bad.json")
	if err := os.WriteFile(bad+".tmp", []byte(`{"command": "x", "nope": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for block := make([]byte, 4096); ; {
		if _, err := f.Write(block); err != nil {
			break
		}
	}
	f.Close()
	if err := os.Rename(bad+".tmp", bad); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := w.Pass(ctx)
	if st.Rejected != 0 || err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Logf("Pass on a full disk = %+v, %v", st, err)
	}
	names, _ := listNames(w.Dirs.Rejected)
	if len(names) != 0 {
		t.Errorf("rejected/ holds %v on a full disk; want nothing until a reason can be written", names)
	}
	if waiting, _, _ := Count(w.Dirs); waiting != 1 {
		t.Errorf("%d files waiting in the spool, want bad.json kept", waiting)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if st, err := w.Pass(ctx); err != nil || st.Rejected != 1 {
		t.Fatalf("Pass once there is room = %+v, %v; want bad.json rejected", st, err)
	}
	reason, err := os.ReadFile(filepath.Join(w.Dirs.Rejected, "bad.json"+reasonExt))
	if err != nil || !strings.Contains(string(reason), "nope") {
		t.Errorf("rejected/bad.json.reason = %q, %v; want the unknown field named", reason, err)
	}
}

// A file over the size limit that a writer still holds open (cp of a
// large file, a slow scp) is left alone until it is closed, and only then
// rejected, its reason giving the size it ended at: not taken from under
// its writer, with a size it had on the way.
func TestOversizedFileIsRejectedOnceWritten(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.Missing(t, "only Linux tells whether a file is open for writing (F_SETLEASE)")
	}
	w := newWatcher(t)
	path := filepath.Join(w.Dirs.Spool, "big.json")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := strings.Repeat(" ", MaxSize)
	if _, err := f.WriteString(`{"command": "true"}` + chunk); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := w.Pass(ctx)
	if err != nil || st.Waiting != 1 || st.Rejected != 0 {
		t.Fatalf("Pass with a writer holding big.json = %+v, %v; want it waiting, not rejected", st, err)
	}
	if !exists(path) {
		t.Fatalf("big.json left the spool while its writer held it open")
	}
	if _, err := f.WriteString(chunk); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	start(t, w)
	reason := filepath.Join(w.Dirs.Rejected, "big.json"+reasonExt)
	// The reason file is there before its text is: wait for the text.
	want := fmt.Sprintf("big.json: the file is %d bytes, over the limit of 1 MiB", fi.Size())
	var text []byte
	deadline := time.Now().Add(10 * time.Second)
	for text, _ = os.ReadFile(reason); !strings.HasPrefix(string(text), want); text, _ = os.ReadFile(reason) {
		if time.Now().After(deadline) {
			t.Fatalf("big.json.reason = %q after 10s; want it to start %q", text, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A slow writer (scp, a copy over a slow link) makes a write event per
// chunk. Once a pass found the file open for writing, its writes are no
// reason for another pass: the watcher looks again every writerPoll, and
// ingests the file once it is closed.
func TestSlowWriterCostsNoPassPerWrite(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.Missing(t, "only Linux tells whether a file is open for writing (F_SETLEASE)")
	}
	w := newWatcher(t)
	var passes atomic.Int64
	w.onPass = func() { passes.Add(1) }
	start(t, w)
	eventually(t, 10*time.Second, "the first pass", func() bool { return passes.Load() > 0 })
	path := filepath.Join(w.Dirs.Spool, "slow.json")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before := passes.Load()
	content := `{"id": "slow", "command": "true"}` + strings.Repeat(" ", 400)
	const writes = 400
	for i := 0; i < writes; i++ {
		if _, err := f.WriteString(content[i : i+1]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // a writer a byte a millisecond, the case at hand
	}
	during := passes.Load() - before
	if _, err := f.WriteString(content[writes:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	eventually(t, 10*time.Second, "slow.json ingested once closed", func() bool { return len(jobs(t, w.Store)) == 1 })
	// At most one pass per writerPoll while it wrote, and a few for the
	// Create and the first writes; not one per write.
	if during > writes/10 {
		t.Errorf("%d passes during %d writes to a file held open, want the writes to be no hint", during, writes)
	}
	t.Logf("%d passes during %d writes", during, writes)
}

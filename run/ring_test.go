package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// numbered returns n bytes of numbered lines, so that any cut shows where
// it was made.
func numbered(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d\n", i)
	}
	return b.Bytes()[:n]
}

// The ring keeps the last TailBytes of whatever sequence of writes, and
// never holds more.
func TestRingKeepsLastBytes(t *testing.T) {
	const limit = claim.TailBytes
	for _, sizes := range [][]int{
		{},
		{1},
		{100, 200},
		{limit},
		{limit - 1, 1},
		{limit - 1, 2},
		{limit + 1},
		{3 * limit},
		{1, 3 * limit, 7},
		{40000, 40000, 40000, 40000, 40000},
		{32 << 10, 32 << 10, 32 << 10, 32 << 10, 32 << 10, 32 << 10, 8 << 10},
	} {
		var r ring
		var whole []byte
		for _, n := range sizes {
			p := numbered(len(whole) + n)[len(whole):]
			r.write(p)
			whole = append(whole, p...)
			if cap(r.buf) > limit {
				t.Fatalf("writes %v: the ring holds %d bytes, more than %d", sizes, cap(r.buf), limit)
			}
		}
		got := r.tail()
		want := whole[max(0, len(whole)-limit):]
		if !bytes.Equal(got.Data, want) || got.Size != int64(len(whole)) {
			t.Errorf("writes %v: tail of %d bytes, size %d; want the last %d bytes, size %d",
				sizes, len(got.Data), got.Size, len(want), len(whole))
		}
		if len(whole) == 0 && got.Data != nil {
			t.Errorf("silent stream: tail %q, want nil", got.Data)
		}
	}
}

// A job that prints 200 KiB has its whole output in its log file and
// exactly its last 64 KiB with its run; a silent stream keeps an empty
// tail and still makes no file.
func TestRunKeepsTails(t *testing.T) {
	s := mustOpenStore(t)
	big := numbered(200 << 10)
	src := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(src, big, 0o600); err != nil {
		t.Fatal(err)
	}
	one := 1
	enqueue(t, s, claim.NewJob{ID: "loud", Command: "cat " + src + "; echo warn >&2; exit 3", MaxRetries: &one})
	enqueue(t, s, claim.NewJob{ID: "quiet", Command: "echo hi"})
	w := newWorker(t, s)
	drain(t, w)

	runs, err := s.RunsWithTails(context.Background(), "loud")
	if err != nil || len(runs) != 1 || runs[0].Tails == nil {
		t.Fatalf("RunsWithTails(loud) = %+v, %v; want one run with tails", runs, err)
	}
	out := runs[0].Tails.Stdout
	if want := big[len(big)-claim.TailBytes:]; !bytes.Equal(out.Data, want) || out.Size != int64(len(big)) || !out.Truncated() {
		t.Errorf("loud stdout tail: %d bytes ending %q, size %d; want the last %d bytes, size %d, truncated",
			len(out.Data), out.Data[max(0, len(out.Data)-12):], out.Size, claim.TailBytes, len(big))
	}
	if e := runs[0].Tails.Stderr; string(e.Data) != "warn\n" || e.Size != 5 || e.Truncated() {
		t.Errorf("loud stderr tail = %q, size %d; want %q, 5", e.Data, e.Size, "warn\n")
	}
	if log, _ := os.ReadFile(runs[0].StdoutPath); !bytes.Equal(log, big) {
		t.Errorf("loud stdout log has %d bytes, want all %d", len(log), len(big))
	}

	runs, err = s.RunsWithTails(context.Background(), "quiet")
	if err != nil || len(runs) != 1 || runs[0].Tails == nil {
		t.Fatalf("RunsWithTails(quiet) = %+v, %v; want one run with tails", runs, err)
	}
	if tl := runs[0].Tails; string(tl.Stdout.Data) != "hi\n" || tl.Stderr.Data != nil || tl.Stderr.Size != 0 {
		t.Errorf("quiet tails = %q and %q (size %d); want %q and nothing", tl.Stdout.Data, tl.Stderr.Data, tl.Stderr.Size, "hi\n")
	}
	if _, err := os.Lstat(runs[0].StderrPath); !os.IsNotExist(err) {
		t.Errorf("silent stderr left a file (%v); want none", err)
	}
}

// A run lost on this host keeps the ends of the files it left; the reaper
// reads them once nothing writes them any more.
func TestReaperKeepsTailsOfLocalRun(t *testing.T) {
	s := mustOpenStore(t)
	lostRuns(t, s, 1)
	runs, err := s.Runs(context.Background(), "lost-0")
	if err != nil || len(runs) != 1 {
		t.Fatalf("Runs(lost-0) = %+v, %v", runs, err)
	}
	big := numbered(100 << 10)
	if err := os.MkdirAll(filepath.Dir(runs[0].StdoutPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runs[0].StdoutPath, big, 0o600); err != nil {
		t.Fatal(err)
	}
	w := newWorker(t, s)
	w.host, w.id = HostID(), "reaper"
	w.reapOnce(context.Background(), context.Background())
	runs, err = s.RunsWithTails(context.Background(), "lost-0")
	if err != nil || len(runs) != 1 || runs[0].Outcome != claim.OutcomeLost || runs[0].Tails == nil {
		t.Fatalf("RunsWithTails(lost-0) = %+v, %v; want one lost run with tails", runs, err)
	}
	if tl := runs[0].Tails; !bytes.Equal(tl.Stdout.Data, big[len(big)-claim.TailBytes:]) || tl.Stdout.Size != int64(len(big)) ||
		tl.Stderr.Data != nil || tl.Stderr.Size != 0 {
		t.Errorf("lost run's tails: stdout %d bytes, size %d; stderr %q; want the last %d of %d, nothing",
			len(tl.Stdout.Data), tl.Stdout.Size, tl.Stderr.Data, claim.TailBytes, len(big))
	}
}

// BenchmarkRingWrite is what keeping the tail adds to each read of a
// job's output pipe (up to 32 KiB); compare BenchmarkLogWrite, what the
// copier does with the same read anyway.
func BenchmarkRingWrite(b *testing.B) {
	p := numbered(32 << 10)
	var r ring
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		r.write(p)
	}
}

// BenchmarkLogWrite is one 32 KiB write to a log file.
func BenchmarkLogWrite(b *testing.B) {
	p := numbered(32 << 10)
	f, err := createLog(filepath.Join(b.TempDir(), "j", "1.out"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.SetBytes(int64(len(p)))
	for i := 0; b.Loop(); i++ {
		if i%1024 == 0 { // keep the file small: the page cache, not the disk
			f.Seek(0, 0)
		}
		if _, err := f.Write(p); err != nil {
			b.Fatal(err)
		}
	}
}

package spool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// dropMany writes n job files into dir outside the timer.
func dropMany(b *testing.B, dir string, n int) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("job-%07d.json", i))
		if err := os.WriteFile(name, fmt.Appendf(nil, `{"command": "echo %d"}`, i), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPass is one op per file: take, read, parse, commit, unlink.
func BenchmarkPass(b *testing.B) {
	home := b.TempDir()
	w := &Watcher{Dirs: DirsOf(home), Store: mustOpenStoreAt(b, filepath.Join(home, "queue.db"))}
	if err := w.Dirs.Make(); err != nil {
		b.Fatal(err)
	}
	dropMany(b, w.Dirs.Spool, b.N)
	began := time.Now()
	st, err := w.Pass(context.Background())
	if err != nil || st.Ingested != b.N {
		b.Fatalf("Pass = %+v, %v; want %d ingested", st, err, b.N)
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "files/s")
}

// BenchmarkReadUnlink is the floor Pass is measured against: read and
// remove each file, nothing else.
func BenchmarkReadUnlink(b *testing.B) {
	eachFile(b, b.TempDir(), func(path, _ string) error {
		if _, err := os.ReadFile(path); err != nil {
			return err
		}
		return os.Remove(path)
	})
}

// BenchmarkReadRenameUnlink is the file system's part of a crash-safe take
// alone: read each file, rename it into a private directory, remove it
// there. Pass cannot beat it; ReadUnlink is what the bench holds Pass to.
func BenchmarkReadRenameUnlink(b *testing.B) {
	dir := b.TempDir()
	own := filepath.Join(dir, ingesting)
	if err := os.Mkdir(own, 0o700); err != nil {
		b.Fatal(err)
	}
	eachFile(b, dir, func(path, name string) error {
		taken := filepath.Join(own, newKey()+"."+name)
		if _, err := os.ReadFile(path); err != nil {
			return err
		}
		if err := os.Rename(path, taken); err != nil {
			return err
		}
		return os.Remove(taken)
	})
}

// eachFile drops b.N files into dir, then times fn on each of them.
func eachFile(b *testing.B, dir string, fn func(path, name string) error) {
	dropMany(b, dir, b.N)
	began := time.Now()
	names, err := listNames(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range names {
		if name == ingesting {
			continue
		}
		if err := fn(filepath.Join(dir, name), name); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "files/s")
}

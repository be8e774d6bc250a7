package spool

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSpecFileRead holds specFile.read, which stops at the first short
// read, to readSpec, which reads to the end: the same bytes for files
// around its buffer's size and MaxSize, and for a file that grew or shrank
// after the size was taken.
func TestSpecFileRead(t *testing.T) {
	dir := t.TempDir()
	sizes := []int{0, 1, 511, 512, 513, 4096, 4096 + 512, MaxSize - 1, MaxSize, MaxSize + 1, MaxSize + 4096}
	for _, n := range sizes {
		for _, hint := range []int64{int64(n), 0, int64(n) / 2, int64(n) * 2, -1} {
			path := filepath.Join(dir, "f.json")
			data := bytes.Repeat([]byte("x"), n)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := openSpecFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.read(hint)
			f.Close()
			if err != nil {
				t.Fatalf("size %d, hint %d: %v", n, hint, err)
			}
			want, err := readSpec(bytes.NewReader(data), hint)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("size %d, hint %d: read %d bytes, readSpec %d", n, hint, len(got), len(want))
			}
		}
	}
}

// TestSpecFileLeaseKept: the read lease openForWriting takes is kept
// until the file is closed (a writer's non-blocking open meanwhile is
// refused, as it would wait), and goes with the close.
func TestSpecFileLeaseKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(path, []byte(`{"command": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := openSpecFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writing, known := f.openForWriting()
	if !known {
		f.Close()
		t.Skip("no leases on this file system")
	}
	if writing {
		t.Fatal("a file nobody writes reported open for writing")
	}
	if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); !errors.Is(err, syscall.EWOULDBLOCK) {
		if err == nil {
			w.Close()
		}
		t.Fatalf("a writer's open while the lease is held: %v, want EWOULDBLOCK", err)
	}
	f.Close()
	w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatalf("a writer's open once the reader closed: %v", err)
	}
	defer w.Close()
	h, err := openSpecFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if writing, _ := h.openForWriting(); !writing {
		t.Fatal("a file open for writing was not reported")
	}
}

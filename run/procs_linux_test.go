package run

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReadProcFile: readProcFile reads what os.ReadFile reads, whatever the
// buffer it is given, and says which path it could not open.
func TestReadProcFile(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 600) // 10,200 bytes
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/proc/self/cmdline", "/proc/self/mountinfo", path} {
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{0, 1, 7, 512, 64 << 10} {
			got, err := readProcFile(p, make([]byte, 0, size))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("readProcFile(%s) with a buffer of %d: %d bytes, %v; want the %d of os.ReadFile", p, size, len(got), err, len(want))
			}
		}
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := readProcFile(missing, nil); !errors.Is(err, fs.ErrNotExist) || !bytes.Contains([]byte(err.Error()), []byte(missing)) {
		t.Errorf("readProcFile of a missing file: %v, want a not-exist error naming it", err)
	}
}

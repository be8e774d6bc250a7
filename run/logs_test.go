package run

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// No log is read through a symlink, at the file or at the job's log
// directory: a link planted there would print any file the user can read.
func TestLogsFollowNoSymlinks(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("top secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	if err := os.Mkdir(filepath.Join(logs, "a"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(logs, "a", "1.out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(logs, "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(filepath.Dir(secret), "1.out")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(logs, "a", "1.out"), filepath.Join(logs, "b", "1.out")} {
		if text, _, err := readLog(Log{Run: claim.Run{Host: HostID(), StdoutPath: path}}); err == nil ||
			!strings.Contains(err.Error(), "symbolic link") || text != "" {
			t.Errorf("reading %s = %v and %q; want an error naming the symlink, nothing read", path, err, text)
		}
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := Follow(ctx, &out, path, 10*time.Millisecond, func() (bool, error) { return true, nil })
		cancel()
		if err == nil || !strings.Contains(err.Error(), "symbolic link") || out.Len() > 0 {
			t.Errorf("Follow(%s) = %v and %q; want an error naming the symlink, nothing printed", path, err, out.String())
		}
	}
	if f, err := createLog(filepath.Join(logs, "b", "2.out")); err == nil {
		f.Close()
		t.Errorf("createLog through a symlinked log directory succeeded; want it refused")
	}
}

// readLog reads l's stream whole, as `queuectl logs` prints it.
func readLog(l Log) (string, Origin, error) {
	rc, from, err := l.Open()
	if err != nil {
		return "", from, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), from, err
}

package cli

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/spool"
)

// badFile is one input of the bad-input corpus as it lands in the spool.
type badFile struct {
	name string
	want string // in the .reason file
}

// TestBadInputCorpus drops every file of spool/testdata/bad, and the bad
// inputs that cannot live in git (huge, symlinks, a FIFO, a socket, a
// directory, foreign-owned, odd names), into the spool of a running worker:
// each must land in rejected/ beside a reason that says what is wrong and
// how to fix it, none may become a job, no symlink may be followed, and the
// worker must keep running jobs. Then every corpus file goes through
// `enqueue -f`: exit 2 with the same message, nothing stored.
func TestBadInputCorpus(t *testing.T) {
	h := newHome(t)
	h.must("config", "set", "spool-rescan", "200ms")
	dir := filepath.Join(h.dir, "spool")
	corpus, err := filepath.Glob(filepath.Join("..", "spool", "testdata", "bad", "*.json"))
	if err != nil || len(corpus) == 0 {
		t.Fatalf("no corpus in spool/testdata/bad: %v", err)
	}
	var files []badFile
	for _, path := range corpus {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		_, perr := spool.Parse(name, data)
		if perr == nil {
			t.Fatalf("%s parses; it belongs in testdata/good", path)
		}
		writeFile(t, filepath.Join(dir, name), data)
		files = append(files, badFile{name, strings.TrimPrefix(perr.Error(), name+": invalid input: ")})
	}
	files = append(files, dropSpecials(t, h, dir)...)

	w := h.start("worker", "start")
	waitFor(t, time.Minute, fmt.Sprintf("%d files rejected", len(files)), func() bool {
		return h.queueStatus().Rejected == len(files)
	})
	for _, f := range files {
		rejected := filepath.Join(h.dir, "rejected", f.name)
		if len(f.name) > 200 {
			rejected = filepath.Join(h.dir, "rejected", f.name[:200-len(".json")]+".json")
		}
		if _, err := os.Lstat(rejected); err != nil {
			t.Errorf("%q: not in rejected/: %v", f.name, err)
			continue
		}
		reason, err := os.ReadFile(rejected + ".reason")
		if err != nil || !strings.Contains(string(reason), f.want) || !strings.Contains(string(reason), "\nfix: ") {
			t.Errorf("%q: reason %q (%v); want it to say %q and how to fix it", f.name, reason, err, f.want)
		}
	}
	if out := h.must("list", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("bad input became jobs: %s", out)
	}

	// The worker is unharmed: a good file still runs.
	writeFile(t, filepath.Join(dir, "good.json"), []byte(`{"id": "good", "command": "true"}`))
	h.waitJob("good")
	h.must("wait", "--timeout", "30s", "good")
	h.must("worker", "stop", "--wait")
	if code := w.exit(t, 30*time.Second); code != 0 || strings.Contains(w.stderr.String(), "panic") {
		t.Errorf("worker exit %d\n%s", code, w.stderr)
	}

	for _, path := range corpus {
		name := filepath.Base(path)
		data, _ := os.ReadFile(path)
		_, errText, code := h.run("enqueue", "-f", path)
		if code != 2 || !strings.HasPrefix(errText, "queuectl: error: ") {
			t.Errorf("enqueue -f %s: exit %d, stderr %q; want 2 and an error", name, code, errText)
		}
		if _, perr := spool.Parse(name, data); !bytes.Contains(data, []byte("\n")) &&
			!strings.Contains(errText, strings.TrimPrefix(perr.Error(), name+": invalid input: ")) {
			t.Errorf("enqueue -f %s said %q; want what the spool says: %v", name, errText, perr)
		}
	}
	for _, path := range []string{dir, filepath.Join(h.dir, "nonexistent.json"), filepath.Join(h.dir, "rejected", "socket.json")} {
		if _, errText, code := h.run("enqueue", "-f", path); code != 2 || !strings.HasPrefix(errText, "queuectl: error: ") {
			t.Errorf("enqueue -f %s: exit %d, stderr %q; want 2 and an error", path, code, errText)
		}
	}
	if n := h.queueStatus().Total; n != 1 {
		t.Errorf("%d jobs after the bad input, want only the good one", n)
	}
}

// dropSpecials puts into the spool the bad inputs that git cannot hold.
func dropSpecials(t *testing.T, h *qhome, dir string) []badFile {
	outside := t.TempDir()
	marker := filepath.Join(outside, "followed")
	job := filepath.Join(outside, "job.json")
	writeFile(t, job, []byte(`{"command": "touch `+marker+`"}`))
	t.Cleanup(func() {
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("a symlinked job ran")
		}
		if _, err := os.Stat(job); err != nil {
			t.Errorf("the target of a symlink was moved: %v", err)
		}
	})
	huge := append([]byte(`{"command": "true"}`), bytes.Repeat([]byte(" "), spool.MaxSize)...)
	writeFile(t, filepath.Join(dir, "huge.json"), huge)
	files := []badFile{{"huge.json", "over the limit of 1 MiB"}}

	for name, target := range map[string]string{
		"link_to_job.json": job, "link_to_passwd.json": "/etc/passwd",
		"link_dangling.json": filepath.Join(outside, "nowhere.json"), "link_to_dir.json": outside,
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		files = append(files, badFile{name, "a symbolic link"})
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	files = append(files, badFile{"fifo.json", "a named pipe (FIFO), not a regular file"})
	if err := os.Mkdir(filepath.Join(dir, "dir.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	files = append(files, badFile{"dir.json", "a directory, not a regular file"})
	l, err := net.Listen("unix", filepath.Join(dir, "socket.json"))
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	t.Cleanup(func() { l.Close() })
	files = append(files, badFile{"socket.json", "a socket, not a regular file"})

	for _, name := range []string{"new\nline.json", "$(touch pwned).json", "-rf *.json", "quote'd.json"} {
		writeFile(t, filepath.Join(dir, name), []byte(`{"command": "true", "retries": 1}`))
		files = append(files, badFile{name, `unknown field "retries"`})
	}
	long := strings.Repeat("x", 250) + ".json"
	writeFile(t, filepath.Join(dir, long), []byte(`{"command": "true"}`))
	files = append(files, badFile{long, "the file name is 255 bytes, over the limit of 200"})

	if os.Geteuid() == 0 {
		foreign := filepath.Join(dir, "foreign.json")
		writeFile(t, foreign, []byte(`{"command": "touch `+marker+`"}`))
		if err := os.Chown(foreign, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		files = append(files, badFile{"foreign.json", "owned by uid 65534"})
	} else {
		t.Log("not root: no foreign-owned file in the corpus")
	}
	return files
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

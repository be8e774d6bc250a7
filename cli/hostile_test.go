package cli

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/internal/testenv"
)

// A hostile environment: the database deleted under a running worker, a
// full disk, a read-only home, a missing home. Each gives a clear error,
// corrupts nothing, and the queue recovers when the cause goes away.

func TestDatabaseDeletedUnderRunningWorker(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "before", "--command", "true")
	w := h.start("worker", "start")
	watch := h.start("watch")
	h.must("wait", "--timeout", "30s", "before")

	for _, name := range []string{"queue.db", "queue.db-wal", "queue.db-shm"} {
		if err := os.Remove(filepath.Join(h.dir, name)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	// Whatever touches the store next must not write on to the deleted
	// file, where no other process would ever look.
	h.must("enqueue", "--id", "after", "--command", "true")
	dropped := filepath.Join(h.dir, "spool", "dropped.json")
	if err := os.WriteFile(dropped+".tmp", []byte(`{"id": "dropped", "command": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dropped+".tmp", dropped); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*proc{w, watch} {
		if code := p.exit(t, 30*time.Second); code != 1 {
			t.Errorf("queuectl %v exited %d after its database was deleted, want 1\n%s", p.cmd.Args[1:], code, p.stderr)
		}
		if !strings.Contains(p.stderr.String(), "was deleted or replaced") {
			t.Errorf("queuectl %v did not say why it stopped:\n%s", p.cmd.Args[1:], p.stderr)
		}
	}
	// Recovery: a new worker serves the new database.
	h.start("worker", "start")
	h.waitJob("dropped")
	h.must("wait", "--timeout", "30s", "after", "dropped")
	checkIntegrity(t, filepath.Join(h.dir, "queue.db"))
}

// mountTmpfs mounts a tmpfs of the given size on a new directory, or skips
// the test when this process may not mount.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs here (%v); run as root (CAP_SYS_ADMIN) to test a full disk and a read-only home", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

func TestDiskFull(t *testing.T) {
	fs := mountTmpfs(t, "16m")
	h := &qhome{t: t, dir: filepath.Join(fs, "home")}
	h.must("config", "set", "heartbeat-interval", "200ms")
	w := h.start("worker", "start")
	off := t.TempDir() // off the full disk
	started, ended := filepath.Join(off, "started"), filepath.Join(off, "ended")
	h.must("enqueue", "--id", "running", "--command", "touch "+started+"; sleep 1; touch "+ended)
	waitFor(t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	// A spool file to drop once the disk is full: a rename needs no space.
	spooled := filepath.Join(h.dir, "spool", "spooled.json")
	if err := os.WriteFile(spooled+".tmp", []byte(`{"id": "spooled", "command": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}

	filler := fill(t, fs)
	if err := os.Rename(spooled+".tmp", spooled); err != nil {
		t.Fatal(err)
	}
	_, errText, code := h.run("enqueue", "--id", "refused", "--command", "true")
	if code != 1 || !strings.Contains(errText, "queuectl: error: ") || !strings.Contains(errText, "full") {
		t.Errorf("enqueue on a full disk: exit %d, stderr %q; want 1 and an error saying the disk is full", code, errText)
	}
	h.must("status") // reading still works
	// The running job ends while the disk is full: its result cannot be
	// stored yet, and must be once there is room again.
	waitFor(t, 30*time.Second, "the job to end, and the worker to say its end waits for room", func() bool {
		_, err := os.Stat(ended)
		return err == nil && strings.Contains(w.stderr.String(), "ended runs wait to be recorded")
	})

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	h.waitJob("spooled")
	h.must("wait", "--timeout", "30s", "running", "spooled")
	h.must("enqueue", "--id", "later", "--command", "true")
	h.must("wait", "--timeout", "30s", "later")
	if _, _, code := h.run("show", "refused"); code != 3 {
		t.Errorf("show refused: exit %d, want 3: the refused enqueue stored a job", code)
	}
	h.must("worker", "stop", "--wait")
	if code := w.exit(t, 30*time.Second); code != 0 {
		t.Errorf("worker exit %d after the disk filled and emptied\n%s", code, w.stderr)
	}
	checkIntegrity(t, filepath.Join(h.dir, "queue.db"))
}

// fill writes a file until the file system at dir is full, and returns its
// path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	// Fill the last partial block too.
	for n := len(block) / 2; n > 0; n /= 2 {
		for {
			if _, err := f.Write(block[:n]); err != nil {
				break
			}
		}
	}
	return path
}

func TestReadOnlyHome(t *testing.T) {
	var h *qhome
	var makeWritable func()
	if os.Geteuid() == 0 {
		fs := mountTmpfs(t, "16m")
		h = &qhome{t: t, dir: filepath.Join(fs, "home")}
		h.must("enqueue", "--id", "waiting", "--command", "true")
		remount(t, fs, syscall.MS_RDONLY)
		makeWritable = func() { remount(t, fs, 0) }
	} else {
		h = newHome(t)
		h.must("enqueue", "--id", "waiting", "--command", "true")
		chmodAll(t, h.dir, 0o500, 0o400)
		makeWritable = func() { chmodAll(t, h.dir, 0o700, 0o600) }
	}
	// A read-only file system is still read (status, list, show, dlq
	// list); a home whose modes forbid writing is not opened at all.
	readable := os.Geteuid() == 0
	for _, args := range [][]string{{"status"}, {"list"}, {"show", "waiting"}, {"dlq", "list"}} {
		if !readable {
			break
		}
		out, errText, code := h.run(args...)
		if code != 0 || errText != "" || args[0] != "dlq" && !strings.Contains(out, "waiting") && !strings.Contains(out, "pending: 1") {
			t.Errorf("queuectl %s on a read-only file system: exit %d, stderr %q, stdout:\n%s\nwant 0 and the store as it is",
				strings.Join(args, " "), code, errText, out)
		}
	}
	for _, args := range [][]string{
		{"status"}, {"list"}, {"show", "waiting"}, {"enqueue", "--command", "true"},
		{"worker", "start", "--drain"}, {"ingest"}, {"config", "set", "lease", "10s"}, {"dlq", "list"},
	} {
		if readable && (args[0] == "status" || args[0] == "list" || args[0] == "show" || args[0] == "dlq") {
			continue
		}
		_, errText, code := h.run(args...)
		if code != 1 || !strings.HasPrefix(errText, "queuectl: error: ") ||
			!(strings.Contains(errText, "read-only file system") || strings.Contains(errText, "permission denied")) {
			t.Errorf("queuectl %s in a read-only home: exit %d, stderr %q; want 1 and an error naming the cause",
				strings.Join(args, " "), code, errText)
		}
	}
	makeWritable()
	h.must("worker", "start", "--drain")
	if j := h.show("waiting"); j.State != "completed" {
		t.Errorf("after the home became writable again: state %s, want completed", j.State)
	}
	checkIntegrity(t, filepath.Join(h.dir, "queue.db"))
}

func remount(t *testing.T, dir string, flags uintptr) {
	t.Helper()
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|flags, ""); err != nil {
		t.Fatalf("remount %s: %v", dir, err)
	}
}

// chmodAll sets the mode of every directory and file under dir.
func chmodAll(t *testing.T, dir string, dirMode, fileMode os.FileMode) {
	t.Helper()
	var paths []string
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err == nil {
			paths = append(paths, path)
		}
		return nil
	})
	// Children first, so that a directory is changed after what is in it.
	for i := len(paths) - 1; i >= 0; i-- {
		fi, err := os.Lstat(paths[i])
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue
		}
		mode := fileMode
		if fi.IsDir() {
			mode = dirMode
		}
		if err := os.Chmod(paths[i], mode); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMissingHome(t *testing.T) {
	base := t.TempDir()
	h := &qhome{t: t, dir: filepath.Join(base, "a", "b", "home")}
	h.must("enqueue", "--id", "x", "--command", "true")
	for _, sub := range []string{"", "spool", "rejected", "dead", "logs"} {
		if mode := modeOf(t, filepath.Join(h.dir, sub)); mode != 0o700|os.ModeDir {
			t.Errorf("created home/%s with mode %v, want drwx------", sub, mode)
		}
	}

	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := &qhome{t: t, dir: filepath.Join(file, "home")}
	_, errText, code := bad.run("status")
	if code != 1 || !strings.Contains(errText, "queuectl: error: create home") || !strings.Contains(errText, "queuectl: hint: ") {
		t.Errorf("home under a file: exit %d, stderr %q; want 1, an error and a hint", code, errText)
	}
}

func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode() & (os.ModeType | os.ModePerm)
}

// TestPermissions runs everything under umask 000, so that any file or
// directory that relied on the umask to be private shows.
func TestPermissions(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	h := newHome(t)
	h.must("enqueue", "--id", "ok", "--command", "echo out; echo err >&2")
	h.must("enqueue", "--id", "dies", "--max-retries", "1", "--command", "exit 1")
	h.must("status")
	spool := filepath.Join(h.dir, "spool")
	if err := os.WriteFile(filepath.Join(spool, "bad.json"), []byte(`{"command": "true", "nope": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(spool, "good.json"), []byte(`{"id": "spooled", "command": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// A symlink in the spool is never followed: its target would run.
	marker := filepath.Join(t.TempDir(), "followed")
	target := filepath.Join(t.TempDir(), "target.json")
	if err := os.WriteFile(target, []byte(`{"id": "linked", "command": "touch `+marker+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(spool, "link.json")); err != nil {
		t.Fatal(err)
	}
	w := h.start("worker", "start")
	h.waitJob("spooled")
	h.must("wait", "--timeout", "30s", "ok", "spooled")
	h.run("wait", "--timeout", "30s", "dies")
	waitFor(t, 30*time.Second, "the bad file and the link to be rejected", func() bool {
		return h.queueStatus().Rejected == 2
	})

	// While the worker runs, the WAL and shared-memory files exist too.
	want := map[string]os.FileMode{
		"": 0o700 | os.ModeDir, "spool": 0o700 | os.ModeDir, "rejected": 0o700 | os.ModeDir,
		"dead": 0o700 | os.ModeDir, "logs": 0o700 | os.ModeDir, "logs/ok": 0o700 | os.ModeDir,
		"logs/ok/1.out": 0o600, "logs/ok/1.err": 0o600, "queue.db": 0o600, "queue.db-wal": 0o600,
		"queue.db-shm": 0o600, "queue.db-wake": 0o600, "dead/dies.json": 0o600,
		"rejected/bad.json.reason": 0o600, "rejected/link.json.reason": 0o600,
		"spool/.ingesting": 0o700 | os.ModeDir,
	}
	for rel, mode := range want {
		if got := modeOf(t, filepath.Join(h.dir, rel)); got != mode {
			t.Errorf("home/%s has mode %v, want %v", rel, got, mode)
		}
	}
	// Whatever else there is: nothing readable or writable by others.
	filepath.Walk(h.dir, func(path string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode()&os.ModeSymlink == 0 && fi.Mode().Perm()&0o077 != 0 &&
			!strings.HasPrefix(path, filepath.Join(h.dir, "rejected")+"/") {
			t.Errorf("%s has mode %v: readable or writable by others", path, fi.Mode())
		}
		return nil
	})
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the symlinked spool file ran")
	}
	if fi, err := os.Lstat(filepath.Join(h.dir, "rejected", "link.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("rejected/link.json: %v, %v; want the symlink itself moved there", fi, err)
	}
	if data, err := os.ReadFile(target); err != nil || !strings.Contains(string(data), "linked") {
		t.Errorf("the symlink's target was touched: %q, %v", data, err)
	}
	h.must("worker", "stop", "--wait")
	w.exit(t, 30*time.Second)
}

// A spool directory someone else owns is refused with the fix, and works
// again once fixed.
func TestForeignSpoolDirectory(t *testing.T) {
	testenv.Root(t, "give the spool to nobody")
	h := newHome(t)
	h.must("status")
	spool := filepath.Join(h.dir, "spool")
	if err := os.Chown(spool, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"worker", "start", "--drain"}, {"ingest"}} {
		_, errText, code := h.run(args...)
		if code != 1 || !strings.Contains(errText, "owned by uid 65534") || !strings.Contains(errText, "queuectl: hint: sudo chown") {
			t.Errorf("queuectl %s with a spool owned by nobody: exit %d, stderr %q; want 1, the owner and the fix",
				strings.Join(args, " "), code, errText)
		}
	}
	if err := os.Chown(spool, 0, 0); err != nil {
		t.Fatal(err)
	}
	h.must("ingest")
}

// TestHugeOutput runs a job that writes 1 GiB to stdout: the job writes
// straight to its log file, so the worker's memory stays flat, and the log
// is complete.
func TestHugeOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: writes 1 GiB")
	}
	const size = 1 << 30
	h := newHome(t)
	w := h.start("worker", "start", "--no-spool")
	h.must("enqueue", "--id", "small", "--command", "echo hi")
	h.must("wait", "--timeout", "30s", "small")
	before := vmHWM(t, w.cmd.Process.Pid)
	h.must("enqueue", "--id", "big", "--command", fmt.Sprintf("head -c %d /dev/zero; echo done >&2", size))
	h.must("wait", "--timeout", "5m", "big")
	after := vmHWM(t, w.cmd.Process.Pid)
	t.Logf("worker peak RSS (VmHWM): %d KiB before the 1 GiB job, %d KiB after", before, after)
	if grew := after - before; grew > 32<<10 {
		t.Errorf("worker peak RSS grew by %d KiB while a job wrote 1 GiB; want it flat (< 32 MiB)", grew)
	}
	if fi, err := os.Stat(filepath.Join(h.dir, "logs", "big", "1.out")); err != nil || fi.Size() != size {
		t.Fatalf("logs/big/1.out: %v, %v; want %d bytes", fi, err, size)
	}

	// `logs` streams it back whole, without holding it either: its peak RSS
	// is read halfway, while it waits for the test to read on.
	cmd := h.command("logs", "big")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var n countingWriter
	io.CopyN(&n, stdout, size/2)
	halfway := vmHWM(t, cmd.Process.Pid)
	io.Copy(&n, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("logs big: %v\n%s", err, errb.String())
	}
	t.Logf("`logs` printed %d bytes; its peak RSS halfway was %d KiB", n, halfway)
	if n != size {
		t.Errorf("logs big printed %d bytes, want %d", n, size)
	}
	if halfway > 128<<10 {
		t.Errorf("logs big peaked at %d KiB of RSS halfway through 1 GiB; want it streamed", halfway)
	}
	h.must("worker", "stop", "--wait")
}

// vmHWM returns a process's peak resident set size, in KiB.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		testenv.Missing(t, "no /proc/%d/status (%v)", pid, err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// waitJob waits for a job to exist, as a spool file is ingested.
func (h *qhome) waitJob(id string) {
	h.t.Helper()
	waitFor(h.t, 30*time.Second, "job "+id+" to be ingested", func() bool {
		_, _, code := h.run("show", id)
		return code == 0
	})
}

// A backup restored over queue.db while a worker runs: the worker ends
// saying why, and the old file's WAL, left beside the restored file, is
// never replayed into it, by the next command or any later one.
func TestRestoreWhileRunning(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "restored-done", "--command", "true")
	h.must("worker", "start", "--drain")
	h.must("enqueue", "--id", "restored-waiting", "--delay", "1h", "--command", "true")
	path := filepath.Join(h.dir, "queue.db")
	backup := filepath.Join(t.TempDir(), "backup.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("VACUUM INTO ?", backup); err != nil {
		t.Fatal(err)
	}
	db.Close()

	w := h.start("worker", "start", "--count", "4")
	for i := 0; i < 100; i++ {
		h.must("enqueue", "--id", fmt.Sprintf("lost-%d", i), "--command", "true # "+strings.Repeat("x", 2000))
	}
	h.must("wait", "--timeout", "60s", "lost-99")
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("no WAL beside the running worker's database: %v, %v", fi, err)
	}
	if err := os.Rename(backup, path); err != nil {
		t.Fatal(err)
	}
	if code := w.exit(t, 30*time.Second); code != 1 || !strings.Contains(w.stderr.String(), "was deleted or replaced") {
		t.Errorf("worker exit %d after its database was replaced, want 1 and why\n%s", code, w.stderr)
	}

	checkBackupJobs(t, h, "restored-done:completed restored-waiting:pending")
	checkIntegrity(t, path)
	h.must("enqueue", "--id", "after", "--command", "true")
	h.must("worker", "start", "--drain")
	if j := h.show("after"); j.State != "completed" {
		t.Errorf("job after in the restored file: %s, want completed", j.State)
	}
	checkIntegrity(t, path)
}

// A spool that turns unsafe under a running worker: the worker says so,
// status shows it, jobs still run, and ingestion resumes by itself once
// the directory is safe again.
func TestWorkerSurvivesUnsafeSpool(t *testing.T) {
	h := newHome(t)
	w := h.start("worker", "start")
	spool := filepath.Join(h.dir, "spool")
	h.must("enqueue", "--id", "first", "--command", "true")
	h.must("wait", "--timeout", "30s", "first") // the worker, and so its watcher, is up
	gate := filepath.Join(t.TempDir(), "gate")
	h.must("enqueue", "--id", "runs", "--command", "while [ ! -e "+gate+" ]; do sleep 0.05; done")
	waitFor(t, 30*time.Second, "job runs to start", func() bool { return h.show("runs").State == "processing" })
	if err := os.Chmod(spool, 0o777); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the worker to say the spool is unsafe", func() bool {
		if ended(w) {
			t.Fatalf("the worker ended:\n%s", w.stderr)
		}
		return strings.Contains(w.stderr.String(), "is unsafe, not ingesting it")
	})
	if out := h.must("status"); !strings.Contains(out, "spool unsafe: it is writable by group or others") || !strings.Contains(out, "chmod 700") {
		t.Errorf("status with an unsafe spool:\n%s\nwant a line saying why and the fix", out)
	}
	var st struct {
		SpoolUnsafe string `json:"spool_unsafe"`
	}
	if err := json.Unmarshal([]byte(h.must("status", "--json")), &st); err != nil || !strings.Contains(st.SpoolUnsafe, "chmod 700") {
		t.Errorf("status --json spool_unsafe = %q (%v), want why and the fix", st.SpoolUnsafe, err)
	}
	// Every other command refuses the unsafe spool, but the running job
	// goes on to its end.
	if _, errText, code := h.run("enqueue", "--command", "true"); code != 1 || !strings.Contains(errText, "refusing spool directory") {
		t.Errorf("enqueue beside an unsafe spool: exit %d, %q; want it refused", code, errText)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "job runs to complete", func() bool {
		var st struct{ Completed int }
		json.Unmarshal([]byte(h.must("status", "--json")), &st)
		return st.Completed == 2
	})
	if err := os.WriteFile(filepath.Join(spool, "later.json"), []byte(`{"id": "later", "command": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(spool, 0o700); err != nil {
		t.Fatal(err)
	}
	h.waitJob("later")
	h.must("wait", "--timeout", "30s", "later")
	if out := h.must("status"); strings.Contains(out, "unsafe") {
		t.Errorf("status after the fix still says unsafe:\n%s", out)
	}
	if !strings.Contains(w.stderr.String(), "is safe again") {
		t.Errorf("the worker did not say the spool is safe again:\n%s", w.stderr)
	}
	h.must("worker", "stop", "--wait")
	if code := w.exit(t, 30*time.Second); code != 0 {
		t.Errorf("worker exit %d, want 0\n%s", code, w.stderr)
	}
}

// secondUser creates a user for the test to give files to, or skips when
// this process cannot (CI runs as root, so it runs there).
func secondUser(t *testing.T) (uid int, name string) {
	t.Helper()
	testenv.Root(t, "create a second user and give it files")
	name = fmt.Sprintf("qctl%d", os.Getpid())
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		testenv.Missing(t, "cannot create a second user: useradd: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	return uid, name
}

// A refused part of a home says what is wrong as the error and the fix
// once, as the hint: the error does not repeat it.
func TestUnsafeHomeFixSaidOnce(t *testing.T) {
	h := newHome(t)
	h.must("status")
	for _, name := range []string{"logs", "schedules", "spool"} {
		path := filepath.Join(h.dir, name)
		if err := os.Chmod(path, 0o777); err != nil {
			t.Fatal(err)
		}
		args := []string{"list"}
		if name == "spool" {
			args = []string{"ingest"}
		}
		_, errText, code := h.run(args...)
		want := fmt.Sprintf("queuectl: error: refusing %s directory %s: it is writable by group or others (mode 0777), "+
			"so anyone who can write there can run commands as you\nqueuectl: hint: chmod 700 %s\n", name, path, path)
		if code != 1 || errText != want {
			t.Errorf("queuectl %s with %s writable by all: exit %d, stderr\n%s\nwant 1 and\n%s", args[0], name, code, errText, want)
		}
		if err := os.Chmod(path, 0o700); err != nil {
			t.Fatal(err)
		}
	}
}

// A home, or anything in it, that another user owns or may write to is
// refused by every command, with what, whose, and the fix: whoever can
// write there can make queuectl run commands as you.
func TestOtherUsersHomeRefused(t *testing.T) {
	uid, name := secondUser(t)
	commands := [][]string{{"status"}, {"list"}, {"enqueue", "--command", "true"}, {"worker", "start", "--drain", "--no-spool"},
		{"ingest"}, {"config", "list"}, {"dlq", "list"}, {"show", "x"}, {"logs", "x"}}
	marker := filepath.Join(t.TempDir(), "pwned")
	for _, tc := range []struct {
		name, path string // path relative to the home
		owned      bool   // given to the second user, else made writable by all
		want       string
	}{
		{"home owned by another user", "", true, fmt.Sprintf("owned by uid %d (%s)", uid, name)},
		{"home writable by all", "", false, "writable by group or others (mode 0777)"},
		{"database of another user", "queue.db", true, fmt.Sprintf("refusing database file %%s: it is owned by uid %d (%s)", uid, name)},
		{"WAL of another user", "queue.db-wal", true, fmt.Sprintf("owned by uid %d (%s)", uid, name)},
		{"SHM writable by all", "queue.db-shm", false, "writable by group or others"},
		{"logs of another user", "logs", true, "refusing logs directory"},
		{"dead writable by all", "dead", false, "refusing dead directory"},
		{"rejected of another user", "rejected", true, "refusing rejected directory"},
		{"spool of another user", "spool", true, "refusing spool directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t)
			// A job that must not run from a home another user can write to.
			h.must("enqueue", "--id", "y", "--command", "touch "+marker)
			path := filepath.Join(h.dir, tc.path)
			if _, err := os.Stat(path); err != nil {
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.owned {
				if err := os.Chown(path, uid, uid); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Chmod(path, 0o777); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, path)
			}
			for _, args := range commands {
				if tc.path == "spool" && args[0] == "status" {
					// status shows an unsafe spool (SPEC §6) instead.
					if out := h.must("status"); !strings.Contains(out, "spool unsafe: it is owned by") {
						t.Errorf("status with a spool of another user:\n%s\nwant it shown", out)
					}
					continue
				}
				_, errText, code := h.run(args...)
				if code != 1 || !strings.HasPrefix(errText, "queuectl: error: refusing ") || !strings.Contains(errText, want) ||
					!strings.Contains(errText, "queuectl: hint: ") || !strings.Contains(errText, path) {
					t.Errorf("queuectl %s: exit %d, stderr %q; want 1, an error containing %q and a hint", strings.Join(args, " "), code, errText, want)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("a job ran from a home another user can write to")
			}
		})
	}
}

// Only queue.db deleted under an idle worker, its WAL and SHM left, and a
// new file made by the next command: the worker ends, exit 1, saying why,
// instead of spinning on I/O errors or idling deaf on the old file.
func TestDatabaseFileOnlyDeletedUnderIdleWorker(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "before", "--command", "true")
	w := h.start("worker", "start")
	h.must("wait", "--timeout", "30s", "before")
	if err := os.Remove(filepath.Join(h.dir, "queue.db")); err != nil {
		t.Fatal(err)
	}
	h.must("status") // makes a new queue.db
	if code := w.exit(t, 30*time.Second); code != 1 || !strings.Contains(w.stderr.String(), "was deleted or replaced") {
		t.Errorf("worker exit %d after its database was deleted, want 1 and why\n%s", code, w.stderr)
	}
	if n := strings.Count(w.stderr.String(), "disk I/O error"); n > 0 {
		t.Errorf("the worker said disk I/O error %d times:\n%s", n, w.stderr)
	}
	h.must("enqueue", "--id", "after", "--command", "true")
	h.must("worker", "start", "--drain")
	if j := h.show("after"); j.State != "completed" {
		t.Errorf("job after in the new file: %s, want completed", j.State)
	}
	checkIntegrity(t, filepath.Join(h.dir, "queue.db"))
}

// A database given with --db in a directory that another user may write
// to is refused by every command, with the fix: whoever may write there
// can swap the file, or plant its WAL, between queuectl's checks of it and
// SQLite's open, and so make you run commands. A sticky directory such as
// /tmp does not help: it keeps no one from planting a -wal or -shm that is
// not there yet.
func TestDatabaseDirectoryOthersMayWriteRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  os.FileMode
		owned bool // given to a second user
		want  string
	}{
		{"writable by all", 0o777, false, "it is writable by group or others (mode 0777)"},
		{"sticky and writable by all", 0o777 | os.ModeSticky, false, "it is writable by group or others (mode 0777)"},
		{"writable by its group", 0o770, false, "it is writable by group or others (mode 0770)"},
		{"owned by another user", 0o755, true, "it is owned by uid "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t)
			dir := filepath.Join(t.TempDir(), "shared")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(dir, "jobs.db")
			marker := filepath.Join(t.TempDir(), "pwned")
			// A job that must not run from a store others may swap.
			h.must("--db", db, "enqueue", "--id", "y", "--command", "touch "+marker)
			if tc.owned {
				uid, _ := secondUser(t)
				if err := os.Chown(dir, uid, uid); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			problem := "database directory " + dir + ": " + tc.want
			// The files to move are named: a pattern (jobs.db*) would move
			// whatever else starts with the name.
			files := []string{db}
			for _, suffix := range []string{"-wal", "-shm", "-ident", "-wake"} {
				if _, err := os.Lstat(db + suffix); err == nil {
					files = append(files, db+suffix)
				}
			}
			fix := "mkdir -m 700 DIR && mv " + strings.Join(files, " ") + " DIR/, then pass --db DIR/jobs.db"
			for _, args := range [][]string{{"status"}, {"list"}, {"enqueue", "--command", "true"},
				{"worker", "start", "--drain", "--no-spool"}, {"ingest"}, {"dlq", "list"}} {
				_, errText, code := h.run(append([]string{"--db", db}, args...)...)
				if code != 1 || !strings.HasPrefix(errText, "queuectl: error: refusing "+problem) ||
					!strings.Contains(errText, "queuectl: hint: "+fix) {
					t.Errorf("queuectl --db %s %s: exit %d, stderr %q; want 1, refusing %s, and the hint %q",
						db, strings.Join(args, " "), code, errText, problem, fix)
				}
			}
			if out, _, code := h.run("--db", db, "doctor"); code != 1 || !strings.Contains(out, problem) || !strings.Contains(out, "fix: "+fix) {
				t.Errorf("queuectl doctor: exit %d, stdout %q; want 1, %q and its fix", code, out, problem)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("a job ran from a store in a directory others may write to")
			}
			// A --db that is a directory is no database to move.
			sub := filepath.Join(dir, "sub")
			if err := os.Mkdir(sub, 0o700); err != nil {
				t.Fatal(err)
			}
			if _, errText, code := h.run("--db", sub, "status"); code != 1 || !strings.Contains(errText, sub+" is a directory: name a database file") || strings.Contains(errText, "mv ") {
				t.Errorf("queuectl --db DIR status, DIR a directory: exit %d, stderr %q; want 1, and that DIR is a directory", code, errText)
			}
		})
	}
}

// A logs/ directory on a file system of its own that fills up stops every
// run from starting (each is put back, "disk full"); doctor, which checked
// the room under the home only, said the disk was ok.
func TestDoctorFullLogsFileSystem(t *testing.T) {
	h := newHome(t)
	h.must("status") // creates the home
	logs := filepath.Join(h.dir, "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", logs, "tmpfs", 0, "size=2m,mode=0700"); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs here (%v); run as root (CAP_SYS_ADMIN) to test a full disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(logs, syscall.MNT_DETACH) })
	fill(t, logs)

	out, errText, code := h.run("doctor")
	if code != 1 || !regexp.MustCompile(`(?m)^fail  disk      0 B free of 2\.0 MiB under .*/logs\n +fix: `).MatchString(out) {
		t.Errorf("doctor with logs/ full on a file system of its own: exit %d\n%s%s\nwant 1 and a disk check failing for %s", code, out, errText, logs)
	}
	if !regexp.MustCompile(`(?m)^ok    disk      .* free of .* under .*/home$`).MatchString(out) {
		t.Errorf("doctor:\n%s\nwant the home's own file system checked too", out)
	}

	// logs/ back on the home's file system: checked once, with the home.
	syscall.Unmount(logs, syscall.MNT_DETACH)
	if out, _, _ := h.run("doctor"); strings.Count(out, " disk ") != 1 {
		t.Errorf("doctor with logs/ on the home's file system:\n%s\nwant one disk check", out)
	}
}

// A logs/ file system with blocks free but no inode left, or mounted
// read-only, stops every run as a full one does; doctor said "ok disk".
func TestDoctorLogsFileSystemWithoutInodesOrReadOnly(t *testing.T) {
	h := newHome(t)
	h.must("status") // creates the home
	logs := filepath.Join(h.dir, "logs")
	if err := syscall.Mount("tmpfs", logs, "tmpfs", 0, "size=2m,nr_inodes=16,mode=0700"); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs here (%v); run as root (CAP_SYS_ADMIN) to test a full disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(logs, syscall.MNT_DETACH) })
	for i := 0; ; i++ {
		if err := os.Mkdir(filepath.Join(logs, fmt.Sprint("d", i)), 0o700); err != nil {
			break
		}
	}
	out, errText, code := h.run("doctor")
	if code != 1 || !regexp.MustCompile(`(?m)^fail  disk      0 inode\(s\) free of 16 under .*/logs\n +fix: `).MatchString(out) {
		t.Errorf("doctor with no inode left under logs/: exit %d\n%s%s\nwant 1 and a disk check failing for the inodes of %s", code, out, errText, logs)
	}

	if err := syscall.Mount("tmpfs", logs, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, "size=4m,nr_inodes=1024"); err != nil {
		t.Fatalf("remount %s read-only: %v", logs, err)
	}
	out, errText, code = h.run("doctor")
	if code != 1 || !regexp.MustCompile(`(?m)^fail  disk      .*/logs is on a read-only file system\n +fix: `).MatchString(out) {
		t.Errorf("doctor with logs/ read-only: exit %d\n%s%s\nwant 1 and a disk check failing for the read-only %s", code, out, errText, logs)
	}
}

// TestJobsGetNoDescriptorTheWorkerInherited: a worker started with files
// open beyond stderr (a shell's `exec 7>log`, a script's pipe) gives none
// of them to its jobs or hooks: a job sees its stdin, stdout, stderr and
// nothing of its worker's caller.
func TestJobsGetNoDescriptorTheWorkerInherited(t *testing.T) {
	h := newHome(t)
	planted, err := os.Create(filepath.Join(t.TempDir(), "planted"))
	if err != nil {
		t.Fatal(err)
	}
	defer planted.Close()
	w := h.command("worker", "start", "--no-spool")
	w.ExtraFiles = []*os.File{planted, planted} // fds 3 and 4 of the worker
	h.startCmd(w)
	dir := t.TempDir()
	job, hook := filepath.Join(dir, "job-fds"), filepath.Join(dir, "hook-fds")
	// (readlink fails on the descriptor the glob read /proc/$$/fd through.)
	spec, _ := json.Marshal(map[string]string{"command": "readlink /proc/$$/fd/* > " + job + "; true",
		"on_success": "readlink /proc/$$/fd/* > " + hook})
	h.must("enqueue", string(spec))
	waitFor(t, 30*time.Second, "the job and its hook to list their descriptors", func() bool {
		a, _ := os.ReadFile(job)
		b, _ := os.ReadFile(hook)
		return len(a) > 0 && len(b) > 0
	})
	out, _ := os.ReadFile(job)
	hookOut, _ := os.ReadFile(hook)
	for what, fds := range map[string]string{"job": string(out), "hook": string(hookOut)} {
		if strings.Contains(fds, planted.Name()) {
			t.Errorf("the %s has the file its worker inherited open:\n%s", what, fds)
		}
	}
}

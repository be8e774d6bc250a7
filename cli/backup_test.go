package cli

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A backup put back over queue.db, by cp (which keeps the inode), by mv, or
// by db restore, while the worker that wrote the WAL beside it runs, after
// it stopped, or after it was killed: the WAL is never laid over the
// restored content. The restored file passes PRAGMA integrity_check, holds
// what the backup held and nothing of the WAL, and serves a new worker.
func TestBackupPutBack(t *testing.T) {
	for _, method := range []string{"cp", "mv", "restore"} {
		for _, worker := range []string{"running", "stopped", "killed"} {
			t.Run(method+"/"+worker, func(t *testing.T) { testBackupPutBack(t, method, worker) })
		}
	}
}

func testBackupPutBack(t *testing.T, method, worker string) {
	h := newHome(t)
	h.must("enqueue", "--id", "restored-done", "--command", "true")
	h.must("worker", "start", "--drain")
	h.must("enqueue", "--id", "restored-waiting", "--delay", "1h", "--command", "true")
	backup := filepath.Join(t.TempDir(), "backup.db")
	h.must("db", "backup", backup)

	path := filepath.Join(h.dir, "queue.db")
	w := h.start("worker", "start", "--count", "4")
	for i := 0; i < 60; i++ {
		h.must("enqueue", "--id", fmt.Sprintf("lost-%d", i), "--command", "true # "+strings.Repeat("x", 2000))
	}
	h.must("wait", "--timeout", "60s", "lost-59")
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("no WAL beside the running worker's database: %v, %v", fi, err)
	}
	switch worker {
	case "stopped":
		w.signal(t, syscall.SIGTERM)
		if code := w.exit(t, 30*time.Second); code != 0 {
			t.Fatalf("worker exit %d after SIGTERM\n%s", code, w.stderr)
		}
	case "killed":
		w.signal(t, syscall.SIGKILL)
		w.exit(t, 30*time.Second)
	}

	putBack(t, h, method, worker, backup, path)
	if worker == "running" {
		// The worker has the old file, or the old content, open: it stops
		// and says why. (db restore refused, and the worker was stopped.)
		if code := w.exit(t, 30*time.Second); method != "restore" && (code != 1 || !strings.Contains(w.stderr.String(), "was deleted or replaced")) {
			t.Errorf("worker exit %d after its database was %s'd over, want 1 and why\n%s", code, method, w.stderr)
		}
	}
	h.must("status")
	checkBackupJobs(t, h, "restored-done:completed restored-waiting:pending")
	checkIntegrity(t, path)
	h.must("enqueue", "--id", "after", "--command", "true")
	h.must("worker", "start", "--drain")
	checkBackupJobs(t, h, "restored-done:completed restored-waiting:pending after:completed")
	checkIntegrity(t, path)
}

// putBack puts backup at path by method; db restore must refuse while the
// worker runs (exit 4), and then works once it is stopped.
func putBack(t *testing.T, h *qhome, method, worker, backup, path string) {
	t.Helper()
	switch method {
	case "cp", "mv":
		if out, err := exec.Command(method, backup, path).CombinedOutput(); err != nil {
			t.Fatalf("%s %s %s: %v\n%s", method, backup, path, err, out)
		}
		return
	}
	if worker == "running" {
		// A file that is no backup is refused for itself, first.
		garbage := filepath.Join(t.TempDir(), "garbage.db")
		if err := os.WriteFile(garbage, []byte("no database\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, stderr, code := h.run("db", "restore", garbage); code != 2 || !strings.Contains(stderr, "is not a sound queuectl backup") {
			t.Errorf("db restore of a file that is no backup, under a running worker: exit %d, want 2 and why\n%s", code, stderr)
		}
		if _, stderr, code := h.run("db", "restore", backup); code != 4 || !strings.Contains(stderr, "worker stop --wait") {
			t.Errorf("db restore under a running worker: exit %d, want 4 and the fix\n%s", code, stderr)
		}
		h.must("worker", "stop", "--wait")
	}
	out := h.must("db", "restore", backup)
	if !strings.Contains(out, "Restored "+path) || !strings.Contains(out, "kept as "+path+".before-restore-") {
		t.Errorf("db restore said %q, want where the replaced database is kept", out)
	}
}

func checkBackupJobs(t *testing.T, h *qhome, want string) {
	t.Helper()
	out := h.must("list", "--json")
	var jobs []jobView
	if err := json.Unmarshal([]byte(out), &jobs); err != nil {
		t.Fatalf("list --json of the restored file: %v\n%s", err, out)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, j.ID+":"+j.State)
	}
	if strings.Join(got, " ") != want {
		t.Errorf("the restored file lists %v, want %s", got, want)
	}
}

// TestDBOfAnotherFile: --db naming a file that is no SQLite database (a
// wrong path, most often) says so and where to look before it advises a
// restore, and leaves the file as it was.
func TestDBOfAnotherFile(t *testing.T) {
	h := newHome(t)
	path := filepath.Join(t.TempDir(), "notes.db")
	text := []byte("not a database, just notes\n")
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := h.run("--db", path, "status")
	want := "queuectl: error: " + path + " is not a SQLite database"
	if code != 1 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "check --db and $QUEUECTL_DB") {
		t.Errorf("status --db %s: exit %d, stderr %q; want 1 and %q, then where to look", path, code, stderr, want)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, text) {
		t.Errorf("the file after status: %q, %v; want it as it was", got, err)
	}
	// Nothing is made beside it either: no record of the store, no WAL.
	if beside, _ := filepath.Glob(path + "?*"); len(beside) > 0 {
		t.Errorf("status --db %s left %v beside it", path, beside)
	}
}

// A corrupt store ends a worker and watch, exit 1, saying what to do,
// instead of keeping them up logging "malformed" at every try.
func TestCorruptStoreStopsWorker(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "victim", "--command", "true")
	path := filepath.Join(h.dir, "queue.db")
	corruptTable(t, path, "jobs")

	w := h.start("worker", "start")
	watch := h.start("watch")
	dropped := filepath.Join(h.dir, "spool", "dropped.json")
	if err := os.WriteFile(dropped+".tmp", []byte(`{"id": "dropped", "command": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dropped+".tmp", dropped); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*proc{w, watch} {
		code := p.exit(t, 30*time.Second)
		if want := "the store is corrupt: restore a backup (queuectl db restore)"; code != 1 || !strings.Contains(p.stderr.String(), want) {
			t.Errorf("queuectl %v on a corrupt store: exit %d, want 1 and %q\n%s", p.cmd.Args[1:], code, want, p.stderr)
		}
	}
}

// TestDoctorOnCorruptStoreSaysRestore: doctor's fix for a corrupt store is
// the command that puts a backup back (db restore), as the worker's words
// are; it named db copy, which copies into an empty database.
func TestDoctorOnCorruptStoreSaysRestore(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "victim", "--command", "true")
	corruptTable(t, filepath.Join(h.dir, "queue.db"), "jobs")
	out, _, code := h.run("doctor")
	if code != 1 || !strings.Contains(out, "fix: stop the workers, then restore a backup: queuectl db restore FILE") || strings.Contains(out, "db copy") {
		t.Errorf("doctor on a corrupt store: exit %d, want 1 and the fix to be db restore\n%s", code, out)
	}
}

// corruptTable overwrites the root page of table in the SQLite file at
// path (no WAL beside it) with bytes that are no b-tree page.
func corruptTable(t *testing.T, path, table string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int64
	err = db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = ?", table).Scan(&root)
	if err == nil {
		err = db.QueryRow("PRAGMA page_size").Scan(&pageSize)
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, int(pageSize)), (root-1)*pageSize); err != nil {
		t.Fatal(err)
	}
}

// db backup and db restore are for a SQLite store; a PostgreSQL one is
// refused (exit 2) with its own tool named, before any connection.
func TestBackupRestoreRefusePostgres(t *testing.T) {
	h := newHome(t)
	h.db = "postgres://nobody@127.0.0.1:1/none"
	file := filepath.Join(t.TempDir(), "backup.db")
	for cmd, tool := range map[string]string{"backup": "pg_dump", "restore": "pg_restore"} {
		if _, stderr, code := h.run("db", cmd, file); code != 2 || !strings.Contains(stderr, tool) {
			t.Errorf("db %s of a PostgreSQL store: exit %d, want 2 and %s named\n%s", cmd, code, tool, stderr)
		}
	}
}

// TestRestoreRefusedWhileOrphansRun: the run of a worker that was killed
// still runs; the restored store would not know it and could run its job
// again beside it. db restore refuses (exit 4), naming the run and how to
// stop it, and restores once it is stopped.
func TestRestoreRefusedWhileOrphansRun(t *testing.T) {
	h := newHome(t)
	w := h.start("worker", "start", "--no-spool")
	// The worker's death kills the run's process group (its guard), the
	// sleep in it too, but not the setsid one, which left the group and is
	// known by the run's mark only.
	dir := t.TempDir()
	h.must("enqueue", "--id", "orphaned", "--command",
		"sleep 300 & echo $! >"+dir+"/grouped; setsid sh -c 'echo $$ >"+dir+"/left; exec sleep 301' </dev/null >/dev/null 2>&1 & "+
			"until [ -s "+dir+"/left ]; do sleep 0.01; done; touch "+dir+"/started; wait")
	pids := startedPids(t, dir, "grouped", "left")
	grouped, left := pids[0], pids[1]
	backup := filepath.Join(t.TempDir(), "b.db")
	h.must("db", "backup", backup)
	w.cmd.Process.Kill()
	w.exit(t, 30*time.Second)
	_, errText, code := h.run("db", "restore", backup)
	if code != exitConflict || !strings.Contains(errText, "orphaned run 1") {
		t.Fatalf("db restore while the killed worker's run still runs: exit %d, want %d naming it\nstderr: %s", code, exitConflict, errText)
	}
	m := regexp.MustCompile(`\(kill ([\d ]+),`).FindStringSubmatch(errText)
	if m == nil {
		t.Fatalf("db restore's hint names no process to kill:\n%s", errText)
	}
	named := strings.Fields(m[1])
	if !slices.Contains(named, strconv.Itoa(left)) {
		t.Errorf("db restore's hint names processes %v, not %d, which the run left:\n%s", named, left, errText)
	}
	waitFor(t, 30*time.Second, "the sleep in the run's group to die with its worker", func() bool { return processGone(grouped) })
	for _, pid := range named {
		if n, _ := strconv.Atoi(pid); n > 0 {
			syscall.Kill(n, syscall.SIGKILL)
		}
	}
	waitFor(t, 30*time.Second, "the run's processes to end", func() bool {
		return syscall.Kill(grouped, 0) != nil && syscall.Kill(left, 0) != nil
	})
	if _, errText, code := h.run("db", "restore", backup); code != 0 {
		t.Errorf("db restore once the run was stopped: exit %d\nstderr: %s", code, errText)
	}
}

// A worker killed with kill -9, with no other worker on its host to reap
// its runs: what its job started dies with it (the guard kills the run's
// process group), so that no worker of another host, taking the job once
// its lease lapses, runs it beside them (SPEC §6).
func TestRunsDieWithTheirWorker(t *testing.T) {
	h := newHome(t)
	w := h.start("worker", "start", "--no-spool")
	dir := t.TempDir()
	h.must("enqueue", "--id", "deep", "--command",
		"sleep 300 & echo $! >"+dir+"/child; sh -c 'sleep 301 & echo $! >"+dir+"/grandchild; wait' & "+
			"until [ -s "+dir+"/grandchild ]; do sleep 0.01; done; touch "+dir+"/started; wait")
	pids := startedPids(t, dir, "child", "grandchild")
	child, grandchild := pids[0], pids[1]
	w.cmd.Process.Kill()
	w.exit(t, 30*time.Second)
	waitFor(t, 30*time.Second, "what the job started to die with its worker", func() bool {
		return processGone(child) && processGone(grandchild)
	})
}

// startedPids waits for a job to touch dir/started, and returns the pids
// it wrote before that in dir's files names, each killed when t ends.
func startedPids(t *testing.T, dir string, names ...string) []int {
	t.Helper()
	waitFor(t, 30*time.Second, "the job to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	})
	pids := make([]int, len(names))
	for i, name := range names {
		if pids[i] = pidIn(filepath.Join(dir, name)); pids[i] <= 0 {
			t.Fatalf("the job wrote no pid to %s", name)
		}
		pid := pids[i]
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	return pids
}

// processGone reports whether pid has exited: no such process, or a
// zombie (it holds nothing; init reaps it).
func processGone(pid int) bool {
	state, _, ok := procStat(strconv.Itoa(pid))
	return !ok || exited(state)
}

// TestRestoreSaysItsRunsInFlight: a backup taken while a job ran holds
// that run in flight, of a worker that no longer runs; restored, the job
// shows processing until a worker takes the run back. db restore says so,
// and the next worker runs the job again.
func TestRestoreSaysItsRunsInFlight(t *testing.T) {
	h := newHome(t)
	g := newGate(t)
	h.startRegistered(h.command("worker", "start", "--no-spool"))
	h.must("enqueue", "--id", "gated", "--command", g.command())
	g.waitStarted(t)
	backup := filepath.Join(t.TempDir(), "backup.db")
	h.must("db", "backup", backup)
	g.release(t)
	h.must("wait", "--timeout", "30s", "gated")
	h.must("worker", "stop", "--wait")
	_, stderr, code := h.run("db", "restore", backup)
	want := "queuectl: the backup was taken while 1 job ran (gated): it shows processing until a worker starts, which takes the run back and runs the job again\n"
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("db restore: exit %d, stderr:\n%s\nwant 0 and %q", code, stderr, want)
	}
	h.must("worker", "start", "--drain", "--no-spool")
	if j := h.show("gated"); j.State != "completed" || len(j.Runs) != 2 || j.Runs[0].Outcome != "lost" {
		t.Errorf("gated after a worker: %s, runs %+v; want completed, its first run lost and run again", j.State, j.Runs)
	}
}

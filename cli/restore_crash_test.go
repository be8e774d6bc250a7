package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/internal/testenv"
)

// TestRestoreKilledMidWay: db restore killed (SIGKILL, by strace at the
// rename of the restored copy over queue.db, or at the rename of the old
// WAL beside the kept file) while `watch` holds the store open and the
// last jobs enqueued are in the WAL. The store any command opens next is
// the old one with every job it acknowledged, or the restored one: never
// the old file without its WAL.
func TestRestoreKilledMidWay(t *testing.T) {
	strace := testenv.LookPath(t, "strace", "strace")
	for _, at := range []string{"queue.db", "queue.db-wal"} {
		t.Run(at, func(t *testing.T) {
			b := newHome(t)
			b.must("enqueue", "--id", "restored", "--command", "true")
			backup := filepath.Join(t.TempDir(), "backup.db")
			b.must("db", "backup", backup)

			h := newHome(t)
			h.must("enqueue", "--id", "old-0", "--command", "true")
			path := filepath.Join(h.dir, "queue.db")
			w := h.start("watch")
			waitFor(t, 30*time.Second, "watch to open the store", func() bool { return holds(w.cmd.Process.Pid, path) })
			for _, id := range []string{"old-1", "old-2", "old-3"} {
				h.must("enqueue", "--id", id, "--command", "true")
			}
			if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
				t.Fatalf("no WAL beside the database watch holds open: %v, %v", fi, err)
			}

			cmd := h.commandOf("queuectl-full", "db", "restore", backup)
			cmd.Args = append([]string{strace, "-f", "-qq", "-o", "/dev/null", "-P", filepath.Join(h.dir, at),
				"-e", "trace=renameat,renameat2", "-e", "inject=renameat,renameat2:error=EPERM:signal=KILL", cmd.Path}, cmd.Args[1:]...)
			cmd.Path = strace
			out, err := cmd.CombinedOutput()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("db restore was not killed at its rename of %s: %v\n%s", at, err, out)
			}

			got := listIDs(t, h)
			if !slices.Equal(got, []string{"old-0", "old-1", "old-2", "old-3"}) && !slices.Equal(got, []string{"restored"}) {
				t.Fatalf("after db restore was killed at its rename of %s the store lists %v, want the old jobs all or the restored one", at, got)
			}
			checkIntegrity(t, path)
			if slices.Equal(got, []string{"restored"}) {
				// watch's file was replaced: it stops on its own, saying so.
				w.exit(t, 30*time.Second)
				if !strings.Contains(w.stderr.String(), "replaced") {
					t.Errorf("watch stopped without saying its database was replaced: %s", w.stderr)
				}
			} else {
				w.signal(t, syscall.SIGTERM)
				w.exit(t, 30*time.Second)
			}
			if again := listIDs(t, h); !slices.Equal(again, got) {
				t.Errorf("once watch stopped the store lists %v, before %v", again, got)
			}
			h.must("db", "restore", backup)
			if got := listIDs(t, h); !slices.Equal(got, []string{"restored"}) {
				t.Errorf("db restore run again: the store lists %v, want the restored job", got)
			}
		})
	}
}

// holds says whether process pid has the file at path open.
func holds(pid int, path string) bool {
	fds, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "fd", "*"))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && l == path {
			return true
		}
	}
	return false
}

func listIDs(t *testing.T, h *qhome) []string {
	t.Helper()
	var jobs []jobView
	out := h.must("list", "--json")
	if err := json.Unmarshal([]byte(out), &jobs); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	ids := []string{}
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	slices.Sort(ids)
	return ids
}

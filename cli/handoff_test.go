package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/handoff"
)

// With a worker running, `enqueue` hands its job over the worker's socket,
// and says and exits exactly what it would say writing the store itself.
func TestEnqueueThroughAWorker(t *testing.T) {
	h := newHome(t)
	h.must("status")
	w := h.start("worker", "start", "--no-spool", "--queue", "elsewhere")
	sock := filepath.Join(h.dir, handoff.SocketName)
	waitFor(t, 30*time.Second, "the enqueue socket", func() bool { _, err := os.Stat(sock); return err == nil })

	if out := h.must("enqueue", "--id", "a", "--command", "echo hi"); out != "Enqueued job a\n" {
		t.Errorf("enqueue printed %q", out)
	}
	if out := h.must("enqueue", "-q", "--unique-key", "k", "--command", "true"); !claim.ValidID(strings.TrimSpace(out)) {
		t.Errorf("enqueue -q printed %q, want an id", out)
	}
	if _, errText, code := h.run("enqueue", "--unique-key", "k", "--command", "true"); code != 0 || !strings.Contains(errText, "skipped") {
		t.Errorf("enqueue of a held unique key: exit %d, stderr %q; want 0 and skipped", code, errText)
	}
	if _, errText, code := h.run("enqueue", "--id", "a", "--command", "echo hi"); code != exitConflict ||
		!strings.Contains(errText, "job a exists already") {
		t.Errorf("enqueue of a taken id: exit %d, stderr %q; want %d and exists already", code, errText, exitConflict)
	}
	if n := h.count("pending"); n != 2 {
		t.Errorf("%d pending jobs, want 2", n)
	}
	h.must("worker", "stop")
	w.exit(t, 30*time.Second)
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket after the worker exited: %v, want it removed", err)
	}
}

// A worker that stores the job but dies before it answers leaves the
// outcome unknown: the enqueue finds its job by id and stores no second.
// One that dies before storing it leaves the enqueue to store it.
func TestEnqueueWithoutAnswerStoresOnce(t *testing.T) {
	for _, stores := range []bool{true, false} {
		h := newHome(t)
		h.must("status")
		s, err := claim.Open(filepath.Join(h.dir, "queue.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ln, err := handoff.Listen(filepath.Join(h.dir, handoff.SocketName))
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
			line, _ := bufio.NewReader(conn).ReadBytes('\n')
			var req struct{ Job claim.NewJob }
			if err := json.Unmarshal(line, &req); err == nil && stores {
				s.Enqueue(context.Background(), req.Job)
			}
		}()
		id := strings.TrimSpace(h.must("enqueue", "-q", "--command", "echo once"))
		j, err := s.Get(context.Background(), id)
		if err != nil || j.Command != "echo once" {
			t.Errorf("worker stored it %v: job %s: %+v, %v", stores, id, j, err)
		}
		if n := h.count("pending"); n != 1 {
			t.Errorf("worker stored it %v: %d pending jobs, want 1", stores, n)
		}
	}
}

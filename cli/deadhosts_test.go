package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestDeadFilesFollowOtherHosts: on PostgreSQL each host keeps its own
// dead/. A job that dies on another host gets its dead/ file in this
// host's home too while this host's worker runs (not only when it next
// starts), and loses it again when another host re-drives the job.
func TestDeadFilesFollowOtherHosts(t *testing.T) {
	here := newPostgresHome(t)
	there := newHome(t)
	there.db = here.db
	here.must("config", "set", "heartbeat-interval", "1s")
	// This host's worker serves another queue: the job runs and dies there.
	w := here.startRegistered(here.command("worker", "start", "--queue", "here", "--no-spool"))

	there.must("enqueue", "--id", "doomed", "--queue", "there", "--max-retries", "1", "--command", "exit 3")
	there.must("worker", "start", "--queue", "there", "--drain", "--no-spool")
	if j := there.show("doomed"); j.State != "dead" {
		t.Fatalf("job doomed is %s after the other host's worker drained, want dead", j.State)
	}
	if _, err := os.Stat(filepath.Join(there.dir, "dead", "doomed.json")); err != nil {
		t.Fatalf("the dead/ file on the host where the job died: %v", err)
	}
	file := filepath.Join(here.dir, "dead", "doomed.json")
	waitReport(t, 20*time.Second, "dead/doomed.json in this host's home", func() bool {
		data, err := os.ReadFile(file)
		var f struct {
			ID   string          `json:"id"`
			Dead json.RawMessage `json:"dead"`
		}
		return err == nil && json.Unmarshal(data, &f) == nil && f.ID == "doomed" && len(f.Dead) > 0
	}, func() string { return "worker stderr:\n" + w.stderr.String() })

	there.must("dlq", "retry", "doomed")
	waitReport(t, 20*time.Second, "dead/doomed.json to go once the job was retried on the other host", func() bool {
		_, err := os.Stat(file)
		return os.IsNotExist(err)
	}, func() string { return "worker stderr:\n" + w.stderr.String() })

	w.signal(t, syscall.SIGTERM)
	if code := w.exit(t, time.Minute); code != 0 {
		t.Errorf("worker exit %d after SIGTERM\nstderr: %s", code, w.stderr)
	}
}

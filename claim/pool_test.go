package claim_test

import (
	"testing"

	"github.com/queuectl/queuectl/claim"
)

func TestForWorker(t *testing.T) {
	for _, tc := range []struct {
		location string
		slots    int
		want     string
	}{
		{"/home/u/.queuectl/queue.db", 8, "/home/u/.queuectl/queue.db"},
		{"postgres://u@db/q", 1, "postgres://u@db/q?pool_max_conns=1"},
		{"postgres://u@db/q?sslmode=disable", 8, "postgres://u@db/q?pool_max_conns=3&sslmode=disable"},
		{"postgresql://u@db/q", 1024, "postgresql://u@db/q?pool_max_conns=8"},
		{"postgres://u@db/q?pool_max_conns=20", 1, "postgres://u@db/q?pool_max_conns=20"},
	} {
		if got := claim.ForWorker(tc.location, tc.slots); got != tc.want {
			t.Errorf("ForWorker(%q, %d) = %q, want %q", tc.location, tc.slots, got, tc.want)
		}
	}
	if got := claim.WorkerConnections(1); got != 2 {
		t.Errorf("WorkerConnections(1) = %d, want 2", got)
	}
}

package claim_test

import (
	"testing"

	"github.com/queuectl/queuectl/claim"
)

func TestForWorker(t *testing.T) {
	for _, tc := range []struct{ slots, want int }{{0, 1}, {1, 1}, {4, 2}, {8, 3}, {1024, 8}} {
		if got := claim.ForWorker(tc.slots).MaxConns; got != tc.want {
			t.Errorf("ForWorker(%d).MaxConns = %d, want %d", tc.slots, got, tc.want)
		}
	}
	if got := claim.WorkerConnections(1); got != 2 {
		t.Errorf("WorkerConnections(1) = %d, want 2", got)
	}
}

package pgtest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/queuectl/queuectl/internal/testenv"
)

// TestSweepRemovesOnlyClustersOfGoneOwners: a cluster directory whose
// owner is gone is removed (its server stopped, where one runs); one of a
// live owner, and one with no owner file, are left.
func TestSweepRemovesOnlyClustersOfGoneOwners(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := func(owner string) string {
		d, err := os.MkdirTemp("", clusterPrefix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(d, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	gone := dir(strconv.Itoa(os.Getpid()) + ":0") // this pid, another start time: its owner is gone
	live := dir(testenv.Mark())
	unowned := dir("")
	(&Cluster{tb: t, bin: serverBin(t)}).sweep()
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the cluster of a gone owner is still there (%v)", err)
	}
	for _, d := range []string{live, unowned} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
}

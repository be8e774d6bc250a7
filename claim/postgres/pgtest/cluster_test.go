package pgtest

import (
	"os"
	"path/filepath"
	"slices"
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

// TestSkipMarkerIsNoCluster: announceSkip's marker and a cluster's
// directory, side by side in the temporary directory, are never taken for
// each other: the sweep looks at the cluster alone.
func TestSkipMarkerIsNoCluster(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	if err := os.WriteFile(skipMarker(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cluster, err := os.MkdirTemp("", clusterPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if got := clusterDirs(); !slices.Equal(got, []string{cluster}) {
		t.Errorf("clusterDirs() = %q, want only the cluster %s", got, cluster)
	}
	markers, _ := filepath.Glob(filepath.Join(os.TempDir(), skipMarkerPrefix+"*"))
	if !slices.Equal(markers, []string{skipMarker()}) {
		t.Errorf("markers %q, want only %s", markers, skipMarker())
	}
}

// TestSkipMarkersOfEndedCommandsGo: announceSkip's marker (newMarker)
// holds its go command's mark; the markers of commands that have ended are
// removed by the next one, and a live command's stays.
func TestSkipMarkersOfEndedCommandsGo(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	if testenv.Mark() == "" {
		testenv.Missing(t, "no /proc: no process marks here")
	}
	marker := func(pid int, mark string) string {
		m := filepath.Join(os.TempDir(), skipMarkerPrefix+strconv.Itoa(pid))
		if err := os.WriteFile(m, []byte(mark), 0o600); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ended := marker(os.Getpid()+1000000, strconv.Itoa(os.Getpid())+":0") // this pid, another start time
	live := marker(os.Getpid(), testenv.Mark())
	if !newMarker() {
		t.Fatal("newMarker: this command's marker was there already")
	}
	if _, err := os.Stat(ended); !os.IsNotExist(err) {
		t.Errorf("the marker of an ended command is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the marker of a live command: %v", err)
	}
	mark, err := os.ReadFile(skipMarker())
	if err != nil || string(mark) != testenv.MarkOf(os.Getppid()) {
		t.Errorf("this command's marker holds %q (%v), want its go command's mark %q", mark, err, testenv.MarkOf(os.Getppid()))
	}
}

package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The guard's decision about a WAL left by a crash, from the record beside
// it: the content as recorded keeps it; content written since by another
// program sets it aside; a record that says the file was being written (a
// process killed mid-checkpoint) keeps it, whatever the file's mark.
func TestGuardDecidesByRecordedMark(t *testing.T) {
	for _, tc := range []struct {
		name     string
		touched  bool // the file's mtime changed after the record
		writing  bool // the record says a checkpoint was under way
		wantKept bool
	}{
		{"as recorded", false, false, true},
		{"written since", true, false, false},
		{"killed mid-checkpoint", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := crashedCopy(t)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			id, err := identify(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := markOf(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			ident, err := os.OpenFile(path+identSuffix, os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if err := writeRecord(ident, record{file: id, mark: m, writing: tc.writing}); err != nil {
				t.Fatal(err)
			}
			ident.Close()
			if tc.touched {
				later := time.Now().Add(time.Hour)
				if err := os.Chtimes(path, later, later); err != nil {
					t.Fatal(err)
				}
			}

			e, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var n int
			if err := e.db.QueryRow("SELECT count(*) FROM jobs").Scan(&n); err != nil {
				t.Fatal(err)
			}
			aside, _ := filepath.Glob(path + "-wal.foreign-*")
			if kept := len(aside) == 0; kept != tc.wantKept || (kept && n != 50) || (!kept && n != 0) {
				t.Errorf("WAL kept %v (set aside: %v), %d jobs; want kept %v", kept, aside, n, tc.wantKept)
			}
		})
	}
}

// crashedCopy returns the path of a database whose 50 jobs are only in its
// WAL, as a worker killed before any checkpoint leaves it: a copy of a live
// store's file and WAL, in a directory of its own, with no record beside it.
func crashedCopy(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "queue.db")
	e, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.checkpoint(context.Background()) // the schema into the file: only the jobs in the WAL
	for i := 0; i < 50; i++ {
		if _, err := e.db.Exec(`INSERT INTO jobs (id, command, state, max_retries, backoff_base, created_at, updated_at, run_after)
			VALUES (?, 'true', 'pending', 3, 2, 0, 0, 0)`, "j"+string(rune('a'+i/26))+string(rune('a'+i%26))); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "queue.db")
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(src + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+suffix, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	return path
}

package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// PRAGMA quick_check finds a page of the file overwritten behind SQLite's
// back, and Health reports it.
func TestHealthFindsCorruption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	s, err := claim.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		mustEnqueue(t, s, claim.NewJob{Command: strings.Repeat("echo filler; ", 40) + string(rune('a'+i%26))})
	}
	s.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	const page = 4096
	if fi.Size() < 8*page {
		t.Fatalf("database is %d bytes; want pages to corrupt", fi.Size())
	}
	junk := []byte(strings.Repeat("\xa5", page))
	for p := fi.Size()/page - 3; p < fi.Size()/page; p++ { // leaves of a table or an index, not the schema
		if _, err := f.WriteAt(junk, p*page); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	s = mustOpenPath(t, path)
	h, err := s.Health(context.Background())
	if err == nil && len(h.Problems) == 0 {
		t.Fatalf("Health() of a corrupt file = %+v, nil; want problems or an error", h)
	}
}

package spool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/queuectl/queuectl/claim"
)

// rejectOne drops content as name and ingests it, which must reject it.
func rejectOne(t *testing.T, w *Watcher, name, content string) {
	t.Helper()
	drop(t, w.Dirs.Spool, name, content)
	if st, err := w.Pass(context.Background()); err != nil || st.Rejected != 1 {
		t.Fatalf("Pass = %+v, %v; want 1 rejected", st, err)
	}
}

func TestListRejected(t *testing.T) {
	w := newWatcher(t)
	if got, err := ListRejected(w.Dirs); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("ListRejected(empty) = %#v, %v; want an empty, non-nil list", got, err)
	}
	rejectOne(t, w, "a.json", `{"command": "true", "bogus": 1}`)
	rejectOne(t, w, "b.json", `{"command": 42}`)
	// A file whose reason someone deleted is listed all the same.
	if err := os.WriteFile(filepath.Join(w.Dirs.Rejected, "c.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ListRejected(w.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Rejected{}
	for _, r := range got {
		byName[r.Name] = r
	}
	if len(got) != 3 {
		t.Fatalf("ListRejected = %+v, want a.json, b.json, c.json", got)
	}
	a := byName["a.json"]
	if a.Size != int64(len(`{"command": "true", "bogus": 1}`)) || !strings.Contains(a.Reason, "bogus") ||
		!strings.HasPrefix(a.Fix, "edit the file") || a.At.IsZero() {
		t.Errorf("a.json = %+v, want its size, a reason naming the field, the fix and a time", a)
	}
	if c := byName["c.json"]; c.Reason != "" || c.Size != 2 {
		t.Errorf("c.json = %+v, want size 2 and no reason", c)
	}
}

func TestRetryRejected(t *testing.T) {
	w := newWatcher(t)
	rejectOne(t, w, "job.json", `{"command": "true", "comand": "typo"}`)
	// The fix, then the retry.
	fixed := filepath.Join(w.Dirs.Rejected, "job.json")
	if err := os.WriteFile(fixed, []byte(`{"id": "fixed", "command": "true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := RetryRejected(w.Dirs, "job.json"); err != nil {
		t.Fatalf("RetryRejected = %v", err)
	}
	if exists(fixed) || exists(fixed+reasonExt) || !exists(filepath.Join(w.Dirs.Spool, "job.json")) {
		t.Fatalf("after RetryRejected: rejected %v, reason %v, spool %v; want only the spool file",
			exists(fixed), exists(fixed+reasonExt), exists(filepath.Join(w.Dirs.Spool, "job.json")))
	}
	if st, err := w.Pass(context.Background()); err != nil || st.Rejected != 0 {
		t.Fatalf("Pass = %+v, %v; want the fixed file taken", st, err)
	}
	if _, err := w.Store.Get(context.Background(), "fixed"); err != nil {
		t.Errorf("Get(fixed) = %v after the retried file was ingested", err)
	}
}

func TestRetryRejectedNeverReplaces(t *testing.T) {
	w := newWatcher(t)
	rejectOne(t, w, "x.json", `{"nope": true}`)
	drop(t, w.Dirs.Spool, "x.json.tmp", `{"command": "mine"}`) // a writer's temporary name: not a candidate
	if err := os.Rename(filepath.Join(w.Dirs.Spool, "x.json.tmp"), filepath.Join(w.Dirs.Spool, "x.json")); err != nil {
		t.Fatal(err)
	}
	err := RetryRejected(w.Dirs, "x.json")
	if !errors.Is(err, claim.ErrConflict) {
		t.Fatalf("RetryRejected over a spool file = %v, want ErrConflict", err)
	}
	if got := string(mustRead(t, filepath.Join(w.Dirs.Spool, "x.json"))); got != `{"command": "mine"}` {
		t.Errorf("spool/x.json = %q, want it untouched", got)
	}
	if !exists(filepath.Join(w.Dirs.Rejected, "x.json")) || !exists(filepath.Join(w.Dirs.Rejected, "x.json"+reasonExt)) {
		t.Errorf("the refused retry moved the rejected file or its reason")
	}
}

func TestPurgeRejected(t *testing.T) {
	w := newWatcher(t)
	rejectOne(t, w, "x.json", `{"nope": true}`)
	if err := PurgeRejected(w.Dirs, "x.json"); err != nil {
		t.Fatalf("PurgeRejected = %v", err)
	}
	if names, _ := listNames(w.Dirs.Rejected); len(names) != 0 {
		t.Errorf("rejected/ holds %v after purge, want nothing", names)
	}
}

func TestRejectedNameErrors(t *testing.T) {
	w := newWatcher(t)
	rejectOne(t, w, "x.json", `{"nope": true}`)
	for _, tc := range []struct {
		name string
		want error
	}{
		{"missing.json", claim.ErrNotFound},
		{"../queue.db", claim.ErrInvalid},
		{"..", claim.ErrInvalid},
		{"", claim.ErrInvalid},
		{"x.json.reason", claim.ErrInvalid},
	} {
		for op, fn := range map[string]func(Dirs, string) error{"RetryRejected": RetryRejected, "PurgeRejected": PurgeRejected} {
			if err := fn(w.Dirs, tc.name); !errors.Is(err, tc.want) {
				t.Errorf("%s(%q) = %v, want %v", op, tc.name, err, tc.want)
			}
		}
	}
	if !exists(filepath.Join(w.Dirs.Rejected, "x.json")) {
		t.Errorf("a refused name touched rejected/x.json")
	}
}

// A name over maxName bytes is cut to fit rejected/, at a character's
// boundary: cut inside a multi-byte character, the name was no longer
// UTF-8, `rejected list --json` gave it with U+FFFD in place of the cut
// bytes, and `rejected purge` or `retry` of the name listed found nothing.
func TestLongNameRejectedUnderUTF8Name(t *testing.T) {
	w := newWatcher(t)
	long := "a" + strings.Repeat("é", 120) + ".json" // 246 bytes; byte 200 is inside an é
	rejectOne(t, w, long, `{"command": "true"}`)
	rs, err := ListRejected(w.Dirs)
	if err != nil || len(rs) != 1 {
		t.Fatalf("ListRejected = %+v, %v; want the one long name", rs, err)
	}
	if name := rs[0].Name; !utf8.ValidString(name) || len(name) > maxName || !strings.HasPrefix(long, strings.TrimSuffix(name, ".json")) {
		t.Fatalf("rejected name = %q, want a UTF-8 start of the name of at most %d bytes", name, maxName)
	}
	if err := PurgeRejected(w.Dirs, rs[0].Name); err != nil {
		t.Fatalf("PurgeRejected(%q) = %v, want the listed name purged", rs[0].Name, err)
	}
}

// A name too long for the spool is cut to fit rejected/, keeping its
// .json: `rejected retry` of the name listed puts back a file the spool
// ingests, not one it ignores for not ending in .json.
func TestLongNameRetriedBecomesAJob(t *testing.T) {
	w := newWatcher(t)
	long := strings.Repeat("x", 230) + ".json"
	rejectOne(t, w, long, `{"id": "long", "command": "true"}`)
	rs, err := ListRejected(w.Dirs)
	if err != nil || len(rs) != 1 {
		t.Fatalf("ListRejected = %+v, %v; want the one long name", rs, err)
	}
	if name := rs[0].Name; len(name) > maxName || !strings.HasSuffix(name, ".json") {
		t.Fatalf("rejected name = %q (%d bytes), want at most %d bytes ending in .json", name, len(name), maxName)
	}
	if err := RetryRejected(w.Dirs, rs[0].Name); err != nil {
		t.Fatalf("RetryRejected(%q) = %v", rs[0].Name, err)
	}
	if st, err := w.Pass(context.Background()); err != nil || st.Ingested != 1 {
		t.Fatalf("Pass after rejected retry = %+v, %v; want the file ingested", st, err)
	}
}

package claim_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// TestOpenRefusesOtherURLs: a URL of another database is no SQLite file.
func TestOpenRefusesOtherURLs(t *testing.T) {
	for _, loc := range []string{"mysql://u@h/db", "sqlserver://h/db", "redis://h"} {
		s, err := claim.Open(loc)
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), "postgres://") {
			t.Errorf("Open(%q) = %v; want ErrInvalid naming what is taken", loc, err)
		}
		if _, err := os.Stat(filepath.Dir(loc)); err == nil && strings.Contains(loc, ":") {
			t.Errorf("Open(%q) made %s", loc, filepath.Dir(loc))
		}
	}
}

// TestRedactLocation: a location is shown without its password, however
// the password is given and however malformed the URL; a file's path is
// shown as it is.
func TestRedactLocation(t *testing.T) {
	tests := []struct{ location, want string }{
		{"/home/u/.queuectl/queue.db", "/home/u/.queuectl/queue.db"},
		{"queue.db", "queue.db"},
		{"postgres://qu@127.0.0.1/qdb", "postgres://qu@127.0.0.1/qdb"},
		{"postgres://qu:S3cretPw!x@127.0.0.1:5491/qdb?sslmode=disable", "postgres://qu:xxxxx@127.0.0.1:5491/qdb?sslmode=disable"},
		{"postgres://qu@127.0.0.1:5491/qdb?sslmode=disable&password=S3cret", "postgres://qu@127.0.0.1:5491/qdb?sslmode=disable&password=xxxxx"},
		{"postgresql://qu@h/qdb?pass%77ord=S3cret&sslpassword=S3cret2", "postgresql://qu@h/qdb?pass%77ord=xxxxx&sslpassword=xxxxx"},
		{"PostgreSQL://qu:S3cret@h/qdb", "postgresql://qu:xxxxx@h/qdb"},
		{"postgress://qu:S3cretPw!x@127.0.0.1:5491/qdb", "postgress://qu:xxxxx@127.0.0.1:5491/qdb"},
		// an '@' in the query, none in a userinfo: the password parameter still masked
		{"postgres://host:5432/db?application_name=me@h&password=S3cret", "postgres://host:xxxxx@h&password=xxxxx"},
		{"postgres:/qu:S3cretPw!x@127.0.0.1:5491/qdb", "postgres:/qu:xxxxx@127.0.0.1:5491/qdb"},
		{"postgres:qu:S3cretPw!x@127.0.0.1:5491/qdb", "postgres:qu:xxxxx@127.0.0.1:5491/qdb"},
		{"postgres://u:S3cret@127.0.0.1:abc/db", "postgres://u:xxxxx@127.0.0.1:abc/db"},
		{"postgres://u:S3 cret@127.0.0.1:5432/db", "postgres://u:xxxxx@127.0.0.1:5432/db"},
		{"postgres://u:12/S3cret@127.0.0.1/db", "postgres://u:xxxxx@127.0.0.1/db"},
		{"postgres://u:S3cr@t@127.0.0.1/db", "postgres://u:xxxxx@127.0.0.1/db"},
		{"postgres://u@127.0.0.1:abc/db?password=S3cret&sslmode=disable", "postgres://u@127.0.0.1:abc/db?password=xxxxx&sslmode=disable"},
		{"host=127.0.0.1 port=5491 user=qu password=S3cretPw!x dbname=qdb", "host=127.0.0.1 port=5491 user=qu password=xxxxx dbname=qdb"},
		{"host=h password = 'S3 cr\\'et' dbname=d", "host=h password = xxxxx dbname=d"},
	}
	for _, tt := range tests {
		got := claim.RedactLocation(tt.location)
		if got != tt.want || strings.Contains(got, "S3") {
			t.Errorf("RedactLocation(%q) = %q, want %q", tt.location, got, tt.want)
		}
	}
}

// TestCheckLocation: what would be taken for a SQLite file's name but is
// meant as a database elsewhere is ErrInvalid, with how to write it; a
// file's path, however odd, passes.
func TestCheckLocation(t *testing.T) {
	refused := []string{
		"host=127.0.0.1 port=5491 user=qu password=S3cret dbname=qdb",
		"dbname=qdb",
		"  host = db.internal",
		"sslmode=disable host=h",
		"postgres:/qu:S3cret@127.0.0.1:5491/qdb",
		"postgresql:qu:S3cret@127.0.0.1/qdb",
		"mysql://qu:S3cret@h/db",
	}
	for _, loc := range refused {
		err := claim.CheckLocation(loc)
		var le *claim.LocationError
		if !errors.Is(err, claim.ErrInvalid) || !errors.As(err, &le) || !strings.Contains(le.Hint(), "postgres://") {
			t.Errorf("CheckLocation(%q) = %v; want ErrInvalid with a hint at a postgres:// URL", loc, err)
		}
		if err != nil && strings.Contains(err.Error(), "S3cret") {
			t.Errorf("CheckLocation(%q) = %v, which shows the password", loc, err)
		}
	}
	for _, loc := range []string{"queue.db", "/var/lib/queuectl/queue.db", "/tmp/a=b.db", "my queues/queue.db", "/srv/my queues/a b=c.db",
		"backup:1.db", "postgres://qu@h/db", "PostgreSQL://qu@h/db?options=-c%20a=b"} {
		if err := claim.CheckLocation(loc); err != nil {
			t.Errorf("CheckLocation(%q) = %v, want nil", loc, err)
		}
	}
}

// TestOpenRefusesKeywordValue: a libpq keyword=value string makes no file.
func TestOpenRefusesKeywordValue(t *testing.T) {
	t.Chdir(t.TempDir())
	loc := "host=127.0.0.1 user=qu dbname=qdb"
	if s, err := claim.Open(loc); !errors.Is(err, claim.ErrInvalid) {
		if err == nil {
			s.Close()
		}
		t.Errorf("Open(%q) = %v, want ErrInvalid", loc, err)
	}
	if entries, _ := os.ReadDir("."); len(entries) > 0 {
		t.Errorf("Open(%q) made %s", loc, entries[0].Name())
	}
}

// TestSameStore: a worker takes a client's jobs only for its own store,
// however the client spells it: a SQLite path by another spelling, a
// PostgreSQL URL with a password the worker's shown location leaves out,
// or without the pool size a worker sets for itself.
func TestSameStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "queue.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	worker := claim.RedactLocation("postgres://me:pw@db1:5432/q?sslmode=disable&pool_max_conns=2")
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{db, filepath.Join(dir, ".", "queue.db"), true},
		{db, filepath.Join(dir, "other.db"), false},
		{"postgres://me:pw@db1:5432/q?sslmode=disable", worker, true},
		{"postgresql://me@DB1/q?sslmode=disable", worker, true},
		{"postgres://me@db1:5432/q?sslmode=disable&password=pw", worker, true},
		{"postgres://me@db1:5432/q?sslmode=disable&pool_max_conns=3", worker, true},
		{"postgres://me@db1:5432/other?sslmode=disable", worker, false},
		{"postgres://you@db1:5432/q?sslmode=disable", worker, false},
		{"postgres://me@db2:5432/q?sslmode=disable", worker, false},
		{"postgres://me@db1:5433/q?sslmode=disable", worker, false},
		{"postgres://me@db1:5432/q?sslmode=disable&search_path=other", worker, false},
		{"/work/main/postgres:/me@db1:5432/q?sslmode=disable", worker, false},
		// A Unix socket's directory, as a parameter of a URL with no host.
		{"postgres:///q?host=/run/postgresql", "postgresql:///q?host=%2Frun%2Fpostgresql&password=pw", true},
		{"postgres:///q?host=/run/postgresql", "postgres:///q?host=/tmp", false},
		{"postgres:///q?host=/run/postgresql", "postgres:///other?host=/run/postgresql", false},
		{"postgres:///q?host=/run/postgresql", worker, false},
	} {
		if got := claim.SameStore(tc.a, tc.b); got != tc.same {
			t.Errorf("SameStore(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

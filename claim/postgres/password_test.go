package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// TestPasswordFileReadAgain: a role's password changes on the server and
// in the password file (PGPASSFILE, as ~/.pgpass) while a store is open
// with a URL that has none. Connections made after the change use the
// file's new password, as libpq's do, so a worker that ran on through the
// change recovers without a restart; while the file still has the old
// one, the refusal is an outage (ErrUnavailable). The server is a cluster
// of the test's own, which asks the role for its password.
func TestPasswordFileReadAgain(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	admin, err := pgx.Connect(t.Context(), cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	exec := func(sql string) {
		t.Helper()
		if _, err := admin.Exec(t.Context(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("CREATE ROLE qtest_pw LOGIN SUPERUSER PASSWORD 'one'")
	cluster.RequirePassword("qtest_pw")
	passfile := filepath.Join(t.TempDir(), "pgpass")
	setPassword := func(pw string) {
		t.Helper()
		if err := os.WriteFile(passfile, []byte("*:*:*:qtest_pw:"+pw+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	setPassword("one")
	t.Setenv("PGPASSFILE", passfile)
	u, err := url.Parse(cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("qtest_pw")
	dsn := u.String()
	// The reload that asks for the password takes effect soon, not at once.
	deadline := time.Now().Add(30 * time.Second)
	for {
		bad := *u
		bad.User = url.UserPassword("qtest_pw", "wrong")
		conn, err := pgx.Connect(t.Context(), bad.String())
		if err != nil {
			break
		}
		conn.Close(context.Background())
		if time.Now().After(deadline) {
			t.Fatal("the server still takes a wrong password 30s after the reload")
		}
		time.Sleep(20 * time.Millisecond) // polling the server, with a deadline
	}
	s := mustOpen(t, dsn)
	if _, err := s.Enqueue(t.Context(), claim.NewJob{Command: "true"}); err != nil {
		t.Fatal(err)
	}

	exec("ALTER ROLE qtest_pw PASSWORD 'two'")
	exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'qtest_pw'")
	// Terminated connections fail once each before the pool makes new ones.
	var enqueueErr error
	for range 10 {
		if _, enqueueErr = s.Enqueue(t.Context(), claim.NewJob{Command: "true"}); enqueueErr == nil {
			t.Fatal("Enqueue with the old password in the file went through")
		}
		if strings.Contains(enqueueErr.Error(), "password authentication failed") {
			break
		}
	}
	if !strings.Contains(enqueueErr.Error(), "password authentication failed") || !errors.Is(enqueueErr, claim.ErrUnavailable) {
		t.Fatalf("Enqueue with the old password = %v, want ErrUnavailable, the server's refusal", enqueueErr)
	}
	setPassword("two")
	if _, err := s.Enqueue(t.Context(), claim.NewJob{Command: "true"}); err != nil {
		t.Errorf("Enqueue once the password file has the new password = %v, want nil", err)
	}
}

// TestLoosePasswordFileIsNotRead: a password file that others may read
// (mode 0644) is not read, as libpq reads none: a server that asks for the
// password refuses the store, and the hint says why and how to fix the
// file. Made the user's alone, it is read.
func TestLoosePasswordFileIsNotRead(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	admin, err := pgx.Connect(t.Context(), cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(t.Context(), "CREATE ROLE qtest_loose LOGIN SUPERUSER PASSWORD 'pw'"); err != nil {
		t.Fatal(err)
	}
	cluster.RequirePassword("qtest_loose")
	passfile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passfile, []byte("*:*:*:qtest_loose:pw\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSFILE", passfile)
	u, err := url.Parse(cluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("qtest_loose")
	dsn := u.String()
	// The reload that asks for the password takes effect soon, not at once.
	var openErr error
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		s, err := claim.Open(dsn)
		if err != nil {
			openErr = err
			break
		}
		s.Close()
		time.Sleep(100 * time.Millisecond)
	}
	var hinted interface{ Hint() string }
	if !errors.As(openErr, &hinted) || !strings.Contains(hinted.Hint(), "chmod 600") || !strings.Contains(hinted.Hint(), passfile) {
		t.Fatalf("Open with a password file others may read = %v; want refused, with a hint naming the file and chmod 600", openErr)
	}
	if err := os.Chmod(passfile, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := claim.Open(dsn)
	if err != nil {
		t.Fatalf("Open with the password file made mode 0600: %v", err)
	}
	s.Close()
}

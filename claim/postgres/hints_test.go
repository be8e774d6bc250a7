package postgres_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
)

// hintOf is the hint an error carries for the command line, "" if none.
func hintOf(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

func withParam(t *testing.T, dsn, key, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestOpenSearchPathWithoutSchema: a search_path naming a schema that does
// not exist is said in those words, with how to create it.
func TestOpenSearchPathWithoutSchema(t *testing.T) {
	dsn := withParam(t, pgtest.Server(t), "search_path", "no_such_schema_q")
	s, err := claim.Open(dsn)
	if err == nil {
		s.Close()
		t.Fatal("Open with a search_path of no schema = nil error")
	}
	if !strings.Contains(err.Error(), `schema "no_such_schema_q" does not exist`) ||
		!strings.Contains(hintOf(err), "CREATE SCHEMA no_such_schema_q") {
		t.Errorf("Open = %v (hint %q); want it to say the schema does not exist and how to create it", err, hintOf(err))
	}
}

// TestOpenWithoutPermission: a user who may not create tables in the
// schema gets the error with what to grant.
func TestOpenWithoutPermission(t *testing.T) {
	role, u := newRole(t, pgtest.DSN(t), "qtest_noperm_", "")
	schema := u.Query().Get("search_path")
	pgtest.Exec(t, "GRANT USAGE ON SCHEMA "+schema+" TO "+role)
	s, err := claim.Open(u.String())
	if err == nil {
		s.Close()
		t.Fatal("Open by a user without CREATE on the schema = nil error")
	}
	if !strings.Contains(err.Error(), "permission denied") || !strings.Contains(hintOf(err), "GRANT") {
		t.Errorf("Open = %v (hint %q); want permission denied with what to grant", err, hintOf(err))
	}
}

// TestOpenTLSMismatch: a URL that asks for a certificate the server's is
// not (verify-full against a self-signed one) is told what to change, not
// to check that the server runs.
func TestOpenTLSMismatch(t *testing.T) {
	dsn := withParam(t, pgtest.DSN(t), "sslmode", "verify-full")
	s, err := claim.Open(dsn)
	if err == nil {
		s.Close()
		t.Skip("the test server's certificate verifies here; nothing to mismatch")
	}
	if !strings.Contains(hintOf(err), "sslrootcert") {
		t.Errorf("Open with sslmode=verify-full = %v (hint %q); want the hint to say how to trust the certificate", err, hintOf(err))
	}
}

// TestOpenUnknownParameter: a URL parameter that neither pgx nor the
// server knows (a typo: sslmod, pool_max_con), which pgx sends the server
// as a setting for it to refuse, is invalid input naming the parameter,
// with how to write it, not a failure to connect said twice.
func TestOpenUnknownParameter(t *testing.T) {
	for _, key := range []string{"sslmod", "pool_max_con"} {
		dsn := withParam(t, pgtest.DSN(t), key, "4")
		s, err := claim.Open(dsn)
		if err == nil {
			s.Close()
			t.Fatalf("Open with %s=4 = nil error", key)
		}
		if !errors.Is(err, claim.ErrInvalid) || errors.Is(err, claim.ErrUnavailable) ||
			!strings.Contains(err.Error(), `"`+key+`"`) || strings.Contains(err.Error(), "failed to connect") ||
			!strings.Contains(hintOf(err), "sslmode") {
			t.Errorf("Open with %s=4 = %v (hint %q); want invalid input naming %s, with the parameters a URL takes", key, err, hintOf(err), key)
		}
	}
}

// TestOpenNoConnectionLeft: a server with no connection left for the user
// (max_connections, or the role's CONNECTION LIMIT, reached: a fleet grown
// past its sizing) is said with a hint at the sizing, not as a bare
// refusal. It is not the store's absence (ErrUnavailable): the
// server answers, and a worker goes on with the connections it holds.
func TestOpenNoConnectionLeft(t *testing.T) {
	_, u := newRole(t, pgtest.DSN(t), "qtest_nolimit_", "CONNECTION LIMIT 0")
	s, err := claim.Open(u.String())
	if err == nil {
		s.Close()
		t.Fatal("Open by a role of CONNECTION LIMIT 0 = nil error")
	}
	if errors.Is(err, claim.ErrUnavailable) || !strings.Contains(err.Error(), "too many connections") ||
		!strings.Contains(hintOf(err), "max_connections") {
		t.Errorf("Open = %v (hint %q); want the server's refusal, with a hint at max_connections", err, hintOf(err))
	}
	// The doc it names is found where queuectl is installed too.
	if h := hintOf(err); strings.Contains(h, "docs/many-hosts.md") && !strings.Contains(h, "/usr/share/doc/queuectl/docs/many-hosts.md") {
		t.Errorf("hint %q names docs/many-hosts.md only by its path in a checkout", h)
	}
}

// TestOpenRefusedUserNamesPgpass: a user the server refuses is told where
// its password comes from: the URL, or ~/.pgpass, where many-hosts.md
// advises to keep it (a URL without one would leave the user nowhere to
// look).
func TestOpenRefusedUserNamesPgpass(t *testing.T) {
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("queuectl_no_such_role")
	s, err := claim.Open(u.String())
	if err == nil {
		s.Close()
		t.Fatal("Open by a role that does not exist = nil error")
	}
	if hint := hintOf(err); !strings.Contains(hint, "refused the user") || !strings.Contains(hint, "~/.pgpass") {
		t.Errorf("Open = %v (hint %q); want a hint at the URL's user and password, and ~/.pgpass", err, hint)
	}
}

// newRole makes a login role of a test's own (prefix and a random suffix,
// with attrs), dropped with what it owns once the test ends, and returns
// it with dsn's URL for it.
func newRole(t *testing.T, dsn, prefix, attrs string) (string, *url.URL) {
	t.Helper()
	var b [4]byte
	rand.Read(b[:])
	role := prefix + hex.EncodeToString(b[:])
	pgtest.Exec(t, "CREATE ROLE "+role+" LOGIN "+attrs)
	t.Cleanup(func() { pgtest.Exec(t, "DROP OWNED BY "+role+"; DROP ROLE "+role) })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return role, u
}

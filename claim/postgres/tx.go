package postgres

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/queuectl/queuectl/claim"
)

// durability is what a committed write survives.
type durability int

const (
	// durable commits wait for the server to flush them to its WAL (the
	// server's synchronous_commit, on by default): enqueues, spool
	// ingestion, config, dlq, recovery, migrations, and every write a
	// worker acts on (claims, ends of runs, lease renewals, its
	// registration). Unlike SQLite's workers, which die with their store's
	// host, a PostgreSQL server crashes on its own while workers on other
	// hosts go on: whatever a worker does on a commit the crash takes back
	// (runs a claimed job, fires a hook, claims the next) is done twice.
	durable durability = iota
	// light commits (SET LOCAL synchronous_commit = off) return before the
	// flush. A crash of the server can lose the last of them (a fraction
	// of a second), never corrupt anything; the death of any client loses
	// nothing. Only writes that nobody acts on use it: when a run's command
	// started (Started), a worker's removal from the registry, the folding
	// of count rows.
	light
)

// beginLight begins a transaction and makes it light in the same round
// trip (a query without arguments goes as one simple-protocol message).
var beginLight = pgx.TxOptions{BeginQuery: "BEGIN; SET LOCAL synchronous_commit = off"}

// write runs fn in one READ COMMITTED transaction and commits it with
// durability d. fn's errors are returned as they are; the server's are
// classified (classify).
func (e *Engine) write(ctx context.Context, d durability, fn func(pgx.Tx) error) error {
	var opts pgx.TxOptions
	if d == light {
		opts = beginLight
	}
	return e.writeTx(ctx, opts, fn)
}

// writeTx is write with the transaction begun as opts says.
func (e *Engine) writeTx(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	tx, err := e.pool.BeginTx(ctx, opts)
	if err != nil {
		return classify(fmt.Errorf("begin: %w", err))
	}
	if err := fn(tx); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return classify(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return classify(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// syncOff makes the transaction it runs in light. A batch runs in one
// implicit transaction, not a transaction block, where SET LOCAL would only
// warn; set_config(…, true) holds until that transaction ends.
const syncOff = "SELECT set_config('synchronous_commit', 'off', true)"

// sendLight sends the statements queue adds to a batch, after syncOff, in
// one round trip; read reads their results in order. They run in one
// implicit transaction, which the server commits after the last statement
// (a batch ends with a single Sync) or rolls back at the first error: what
// read makes of the results can no longer change what commits, so every
// decision of such a transaction lives in its statements.
func (e *Engine) sendLight(ctx context.Context, queue func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	b := &pgx.Batch{}
	b.Queue(syncOff)
	queue(b)
	return e.send(ctx, b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return batchStart("make the commit light", err)
		}
		return read(br)
	})
}

// batchStart is the error of a batch's first statement, a setting: a lost
// connection fails it first, and is said as itself (the caller says what
// it was doing); any other error says which step it was.
func batchStart(step string, err error) error {
	if errors.Is(classify(err), claim.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%s: %w", step, err)
}

// sendDurable is sendLight with the server's synchronous_commit.
func (e *Engine) sendDurable(ctx context.Context, queue func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	b := &pgx.Batch{}
	queue(b)
	return e.send(ctx, b, read)
}

// send sends b and reads its results with read. The error is read's, the
// server's (classify) when the batch failed: read's says which statement,
// unless it is only the answer ErrNoJob or ErrLost, with the batch's own
// error (a failed commit) more to the point.
func (e *Engine) send(ctx context.Context, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	br := e.pool.SendBatch(ctx, b)
	err := read(br)
	closeErr := br.Close()
	answer := errors.Is(err, claim.ErrNoJob) || errors.Is(err, claim.ErrLost)
	if closeErr != nil && (err == nil || answer) {
		return classify(closeErr)
	}
	return classify(err)
}

// SQLSTATE codes the engine tells apart.
const (
	codeUniqueViolation = "23505"
	codeUndefinedTable  = "42P01"
	codeUndefinedObject = "42704" // a setting the server does not know, among others
	codeInvalidPassword = "28P01"
	codeInvalidAuth     = "28000"
	codeInvalidCatalog  = "3D000" // no such database
	codeTooManyConns    = "53300" // max_connections, or the role's or database's CONNECTION LIMIT, reached
	// a write (CREATE DATABASE, say) by a role without the right
	codeInsufficientPrivilege = "42501"
	codeReadOnly              = "25006" // a write in a read-only transaction (a standby)
	codeQueryCanceled         = "57014" // statement_timeout, or pg_cancel_backend
)

// isUnique reports whether err is a unique constraint violation.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == codeUniqueViolation
}

// classify marks errors that mean the server cannot be reached or refuses
// us as claim.ErrUnavailable, with a hint at the fix, so that callers can
// say what to check and workers can wait for the server instead of failing
// jobs. Other errors come back as they are.
func classify(err error) error {
	if err == nil || errors.Is(err, claim.ErrUnavailable) {
		return err
	}
	err = tidyAttempts(err)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == codeInvalidPassword || pe.Code == codeInvalidAuth:
			return unavailable(err, "the server refused the user: check the user and password in "+claim.LocationFlag+
				" (or ~/.pgpass, or the file PGPASSFILE names, where the URL has none), and the server's pg_hba.conf")
		case pe.Code == codeInvalidCatalog:
			return unavailable(err, "create the database first (createdb, or CREATE DATABASE), or name another in "+claim.LocationFlag)
		case pe.Code == codeTooManyConns:
			// Not ErrUnavailable: the server answers, and a worker whose pool
			// cannot grow goes on with the connections it holds.
			return &hinted{err, "the server has no connection left for this user: raise its max_connections (or the role's " +
				"CONNECTION LIMIT), or run fewer worker processes or slots against it; docs/many-hosts.md (Connections) beside README.md has the sum " +
				"(from the .deb: /usr/share/doc/queuectl/docs/many-hosts.md)"}
		case pe.Code == codeUndefinedTable:
			// Every statement after Open names only the queue's own tables,
			// which Migrate made (and which Migrate and OpenReadOnly look for
			// before classifying): they went after the store opened them.
			return &hinted{fmt.Errorf("%w (the database or its schema was dropped while in use): %w", claim.ErrDropped, err),
				"the jobs went with the tables: restore the database from a backup, or, if dropping it was meant, " +
					"start the workers again, which make the tables anew"}
		case pe.Code == codeReadOnly:
			// A standby, or default_transaction_read_only on: the store takes
			// no writes until it is a primary again, an outage for a worker.
			return unavailable(fmt.Errorf("%w: %w", claim.ErrReadOnly, err), "the server takes no writes (a standby, or default_transaction_read_only = on for the database "+
				"or role): name the primary in "+claim.LocationFlag+", or turn it off there: ALTER DATABASE NAME RESET default_transaction_read_only")
		case pe.Code == codeQueryCanceled:
			// The server answers, but gave up on the statement: most often
			// it waited on a lock another session holds on the queue's tables.
			return unavailable(err, "the server canceled the statement: it ran past the statement_timeout of the database or role "+
				"(SHOW statement_timeout), most often waiting for a lock another session holds on the queue's tables "+
				"(see pg_locks and pg_stat_activity), or an administrator canceled it; end that session, or raise the timeout: "+
				"ALTER ROLE USER SET statement_timeout = '1min'")
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57"): // connection exception, operator intervention
			return unavailable(err, serverHint)
		case pe.Code == codeInsufficientPrivilege:
			return &hinted{err, "the user of " + claim.LocationFlag + " may not do this there: as the schema's owner, " +
				"GRANT USAGE, CREATE ON SCHEMA NAME TO USER (and GRANT ALL ON ALL TABLES IN SCHEMA NAME TO USER " +
				"once the tables exist), or give the queue a schema of its own: CREATE SCHEMA NAME AUTHORIZATION USER, " +
				"then add &search_path=NAME to the URL"}
		}
		return err
	}
	if hint := tlsHint(err); hint != "" {
		return unavailable(err, hint)
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || pgconn.SafeToRetry(err) {
		return unavailable(err, serverHint)
	}
	return err
}

// tlsHint is the fix for a connection that failed on TLS: the server
// takes none (sslmode=require against ssl = off), or its certificate is
// not one the URL trusts (sslmode=verify-ca or verify-full); "" for any
// other error.
func tlsHint(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case strings.Contains(err.Error(), "server refused TLS connection"):
		return "the server takes no TLS connection: set sslmode=disable in " + claim.LocationFlag + ", or turn ssl on in the server's postgresql.conf"
	case errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid), errors.As(err, &verify):
		return "the server's certificate is not one " + claim.LocationFlag + " trusts: name its CA with sslrootcert=FILE, " +
			"check that the host is the certificate's, or use sslmode=require to encrypt without verifying"
	}
	return ""
}

const serverHint = "check that the PostgreSQL server is running and reachable at the host and port " + claim.LocationFlag + " names"

func unavailable(err error, hint string) error {
	return &hinted{fmt.Errorf("%w: %w", claim.ErrUnavailable, err), hint}
}

// hinted is an error with the fix for it, which the command line prints as
// `queuectl: hint: …`.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }

// Hint says how to fix the error.
func (h *hinted) Hint() string { return h.hint }

// badURL is the error of a DSN that pgx cannot read (err): invalid input,
// which names what is wrong with it.
func badURL(dsn string, err error) error {
	return &claim.LocationError{Location: dsn, Problem: "is not a PostgreSQL URL queuectl can read: " + parseProblem(err),
		Fix: "a PostgreSQL URL looks like " + claim.URLForm}
}

// parseProblem is what err says is wrong with a DSN, without the DSN:
// LocationError names it already, and without its password, which a
// url.Error shows. pgx's ParseConfigError begins with the DSN, as
// "cannot parse `DSN`: "; what follows is the problem.
func parseProblem(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	msg := err.Error()
	var pe *pgconn.ParseConfigError
	if i := strings.LastIndex(msg, "`: "); errors.As(err, &pe) && i >= 0 {
		return msg[i+len("`: "):]
	}
	return msg
}

// attempts is a connect error said once per distinct attempt (tidyAttempts).
type attempts struct {
	error
	msg string
}

func (a attempts) Error() string { return a.msg }
func (a attempts) Unwrap() error { return a.error }

// tidyAttempts shortens the message of a connect error, which lists every
// attempt pgx made (sslmode=prefer tries TLS, then without): an attempt
// said the same way twice is said once, and one the server refused TLS on
// is left out beside another, which says why the connection failed.
func tidyAttempts(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	msg := err.Error()
	head, rest, ok := strings.Cut(msg, ":\n\t")
	if !ok {
		return err
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n\t") {
		if !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	if kept := slices.DeleteFunc(slices.Clone(lines), func(l string) bool {
		return strings.Contains(l, "server refused TLS connection")
	}); len(kept) > 0 {
		lines = kept
	}
	if len(lines) == 1 {
		return attempts{err, head + ": " + lines[0]}
	}
	return attempts{err, head + ":\n\t" + strings.Join(lines, "\n\t")}
}
